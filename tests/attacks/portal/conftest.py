"""The portal the attacks of this folder meet: test_portal's (a ``grader serve`` process on the
demo course, its instructor and six students signed in), one server per module."""

from test_portal import portal  # noqa: F401 (the fixture)
