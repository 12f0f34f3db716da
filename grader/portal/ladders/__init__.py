"""Ladders: a course's standing competitions between the arena's engines, their games
scheduled while workers idle, their ratings, and the deadline tournament. No page: theirs
are in ``grader.portal.pages.ladders``."""
