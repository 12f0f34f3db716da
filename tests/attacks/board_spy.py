"""A lab script that tries to carry one test's board into the next (issue: private tests
leaked through public feedback): it appends its board to a file in every folder it may write
(its own, the working folder, home, the temporary folders) and claims as its score a checksum
of the boards it found there, so a public test's feedback would carry the private boards before it.
A test names the file by a token of its own (TOKEN below) and removes what it finds of it."""

import os
import sys
import zlib

found = 0  # a checksum of the boards found: it tells them apart
for folder in {
    os.path.dirname(os.path.abspath(__file__)),
    os.getcwd(),
    os.path.expanduser("~"),
    "/tmp",
    "/var/tmp",
    "/dev/shm",
}:
    path = os.path.join(folder, "boards-seen-TOKEN.txt")
    try:
        with open(path) as f:
            found = (found + zlib.crc32(f.read().encode())) % 65
    except OSError:
        pass
    try:
        with open(path, "a") as f:
            f.write(sys.argv[1] + "\n")
    except OSError:
        pass
print(f"score {found}\n-1")
