"""Crashes: a syntax error, so it never prints anything."""
print("Min score: 18"
