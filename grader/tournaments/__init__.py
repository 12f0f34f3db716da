"""Tournaments between engines: the run and its folder, formats (round-robin, gauntlet, Swiss,
SPRT), ratings and the report page. Imports grading, execution, engines, config, games and the
ground floor."""
