"""The web layer: what every page stands on. The middleware (security headers, ``/api/...`` as
JSON, the session cookie, the body limit), the shared state of the routes (``Portal``), the
route wrapper (``endpoint``, ``page``, CSRF, who is signed in), the pages' live updates, and
the templates and static files. It shows nothing of its own: the pages are in
``grader.portal.pages``, one module per area."""
