"""Prints escape sequences that would, on a terminal, write a perfect grade over its real one
(save the cursor, move up, erase, print, restore) and set the clipboard (OSC 52); then fails.
grader-hostile:terminal_escapes"""

import sys

ESC = "\x1b"
spoof = f"{ESC}7{ESC}[17A\r{ESC}[2Kterminal_escapes.py: 1/1  (1 test run, all perfect){ESC}8"
print(f"score 0 {spoof}", flush=True)
sys.stderr.write(f"{ESC}]52;c;cm0gLXJmIH4K{chr(7)}\u202eboom{spoof}\n")
sys.exit(1)
