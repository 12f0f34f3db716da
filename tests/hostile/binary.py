"""Hostile: binary and invalid UTF-8 around a correct score line."""

import os
import sys

out = sys.stdout.buffer
out.write(os.urandom(5000).replace(b"\n", b" ") + b"\n")
out.write(b"\xff\xfe\x00 Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51] \xc3\x28\n")
out.write(b"\x80\x81\x82\n")
