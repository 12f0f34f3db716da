"""Accounts: users, passwords, sessions on the server, one-time sign-in links, API tokens, the
sign-in limits, and the roster (read from a CSV, imported). No page: theirs are in
``grader.portal.pages.accounts``."""
