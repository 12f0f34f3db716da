"""LTI 1.3: the portal as a tool of Canvas, Moodle or another platform: the login and the
launch, the tool's signing keys, and the scores sent back. The registrations are read with
the course (``grader.portal.course.lti``). No page: theirs are in ``grader.portal.pages.lti``."""
