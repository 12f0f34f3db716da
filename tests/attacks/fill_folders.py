"""Hostile: reserves disk (or memory) in its working folder and in /tmp, 1 MiB a file, until
refused, without writing a byte (posix_fallocate: RLIMIT_FSIZE bounds each file, not the sum);
prints how many MiB it got in each, then the handout board's right answer."""

import os

for where in (".", "/tmp"):
    got = 0
    while got < 256:  # far beyond the test's bound: 256 MiB
        try:
            fd = os.open(os.path.join(where, f"fill{got}"), os.O_CREAT | os.O_WRONLY, 0o600)
            try:
                os.posix_fallocate(fd, 0, 2**20)
            finally:
                os.close(fd)
        except OSError:
            break
        got += 1
    print(f"{where}: {got} MiB")
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
