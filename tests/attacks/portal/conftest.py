"""What the attacks of this folder meet: test_portal's portal (a ``grader serve`` process on
the demo course, its instructor and six students signed in, two of student 1's scripts graded)
and test_portal_lti's LMS with the portal registered on it; one of each per module. Without
the portal's extras they skip, as the modules they come from do."""

import importlib.util

import pytest

if all(importlib.util.find_spec(m) for m in ("httpx", "starlette")):
    from test_portal import graded_pair, portal  # noqa: F401 (fixtures)
else:

    @pytest.fixture(scope="module")
    def portal():
        pytest.skip("the portal's tests need httpx and the portal: pip install -e '.[test,portal]'")


if all(importlib.util.find_spec(m) for m in ("httpx", "starlette", "jwt")):
    from test_portal_lti import tool  # noqa: F401 (a fixture)
