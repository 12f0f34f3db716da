"""Regression over GTP: files of GTP commands and expected answers (gogui-regress's), run on
students' programs one file at a time, judged by the grader's own solver; a class into a run
folder, its reports, Gradescope's results and the presubmission check."""
