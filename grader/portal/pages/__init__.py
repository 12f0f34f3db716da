"""The portal's pages, one module per area (the rule: a page lives here, in the module of the
area it shows; none lives beside its concern's services): ``accounts`` (signing in, links,
the roster), ``assignments`` (a student's), ``staff`` (the class table and what staff do from
it), ``downloads``, ``arena``, ``ladders``, ``lti``. Each module's ``routes`` lists its
routes for ``grader.portal.app``. A page reads and writes through the services below it
(accounts, course, jobs, arena, ladders, lti) and the web layer; nothing below imports a page."""
