"""The course: ``course.yaml`` loaded (assignments, ladders, the LTI registrations, a GTP
lab's regression file), synced into the database, the late policy and deadlines (which
submission counts, and its score), and what leaves the portal (Gradescope, run folders,
LMS grade files, the similarity report). No page: theirs are in ``grader.portal.pages``."""
