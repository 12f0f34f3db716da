"""The floor the three modes (grading, regression, tournaments) share: run folders and their
sealed records, students' submissions, seeds, what a rejudge changed, and the text and HTML
helpers of their reports."""
