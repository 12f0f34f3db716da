"""A broken example for the Gomoku lab: its 'solve' has a bug (an index off the end of a
list) and its answer() lost the starter's error handling, so the program dies with a
traceback at its first 'solve'. Usage: python crash.py"""

from solver import Player, main


class Crash(Player):
    def answer(self, line):  # the starter's answer() without its try/except
        words = line.split()
        if not words:
            return None
        number = words.pop(0) if words[0].isdigit() else ""
        text = self.run(words[0], words[1:])
        return "=" + number + (" " + text if text else "") + "\n\n"

    def solved(self):
        row = [0] * 3
        return row[len(row)], None  # IndexError: the bug


if __name__ == "__main__":
    main(Crash())
