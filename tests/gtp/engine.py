"""A GTP Gomoku program for the tests, misbehaving on purpose: python engine.py MODE.

It answers the setup commands (boardsize, clear_board, play, timelimit, protocol_version)
with '='; then by MODE:
  silent    never answers 'solve'
  crash     exits with code 4 at 'solve'
  garbage   answers 'solve' with '= maybe C3'
  error     answers 'solve' with '? not implemented'
  crash50   answers 'solve' with '= unknown', and at test 50 says 'boom' on stderr and exits
  refuse    answers 'play' with '? illegal move', 'solve' with '= unknown'
  resign    answers 'genmove' with '= resign'
"""

import sys

MODE = sys.argv[1]

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    number = words.pop(0) if words[0].isdigit() else ""
    status, text = "=", "2" if words[0] == "protocol_version" else ""
    if MODE == "crash50" and number == "50":
        sys.exit("boom")
    if MODE == "resign" and words[0] == "genmove":
        text = "resign"
    elif MODE == "refuse" and words[0] == "play":
        status, text = "?", "illegal move"
    elif MODE in ("crash50", "refuse") and words[0] == "solve":
        status, text = "=", "unknown"
    elif words[0] == "solve":
        if MODE == "silent":
            continue
        if MODE == "crash":
            sys.exit(4)
        status, text = ("=", "maybe C3") if MODE == "garbage" else ("?", "not implemented")
    elif words[0] == "quit":
        break
    sys.stdout.write(f"{status}{number}{' ' + text if text else ''}\n\n")
    sys.stdout.flush()
