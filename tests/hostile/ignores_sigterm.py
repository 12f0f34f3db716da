"""Hostile: ignores SIGTERM (and SIGINT, SIGHUP) and keeps running after printing its move."""

import signal

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
print("My move is 51")
while True:
    pass
