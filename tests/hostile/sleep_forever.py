"""Hostile: sleeps forever."""

import time

time.sleep(10**6)
