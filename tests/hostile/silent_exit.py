"""Hostile: exits at once, printing nothing."""
