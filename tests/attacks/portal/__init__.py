"""Attacks on the course portal, each against a real server over real HTTP: what they try and
what the portal promises is the security table of docs/guides/portal.md."""
