"""What the attacks of this folder meet: the portal of tests/conftest.py (a ``grader serve``
process on the demo course, its instructor and six students signed in, two of student 1's
scripts graded) and test_portal_lti's LMS with the portal registered on it; test_portal_mail's
SMTP server on loopback and a portal sending it mail; one of each per module. Without the
portal's extras (or aiosmtpd) their tests skip, as the modules they come from do."""

import importlib.util

if all(importlib.util.find_spec(m) for m in ("httpx", "starlette", "jwt")):
    from test_portal_lti import tool  # noqa: F401 (a fixture)
if all(importlib.util.find_spec(m) for m in ("httpx", "starlette", "aiosmtpd")):
    from test_portal_mail import mailbox, mailing, password  # noqa: F401 (fixtures)
