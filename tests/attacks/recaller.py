"""A GTP program that carries one test's position into the next (issue: private tests leaked
through public feedback): it remembers the last stone of each position it is told and answers
each 'solve' and 'genmove' with the last stone of the position before, so a public test's
answer shows a move of the private test asked before it."""

import sys

last = previous = "A1"
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    number = words.pop(0) if words[0].isdigit() else ""
    text = "2" if words[:1] == ["protocol_version"] else ""
    if words[:1] == ["play"] and len(words) == 3:
        last = words[2].upper()
    elif words[:1] in (["solve"], ["genmove"]):
        text = f"w {previous}" if words[0] == "solve" else previous
        previous = last
    elif words[:1] == ["quit"]:
        break
    sys.stdout.write(f"={number}{' ' + text if text else ''}\n\n")
    sys.stdout.flush()
