"""Hostile: the kernel's keyrings as a store shared between tests and students (a job slot's
uid is reused, and keys outlive their process). 'keyring.py put NAME' adds a key NAME to
the user keyring; 'keyring.py get NAME' looks for it; 'keyring.py try NAME' adds it and
takes it out again (a control that leaves nothing). Prints what happened, then the handout
board's right answer."""

import ctypes
import os
import platform
import sys

ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
USER_KEYRING, KEYCTL_UNLINK, KEYCTL_SEARCH = -4, 9, 10

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
action, name = sys.argv[1], sys.argv[2].encode()
if action in ("put", "try"):
    key = libc.syscall(ADD_KEY, b"user", name, b"answers", 7, USER_KEYRING)
    print("put:", "added" if key >= 0 else f"refused ({os.strerror(ctypes.get_errno())})")
    if key >= 0 and action == "try":
        libc.syscall(KEYCTL, KEYCTL_UNLINK, key, USER_KEYRING)
else:
    key = libc.syscall(KEYCTL, KEYCTL_SEARCH, USER_KEYRING, b"user", name, 0)
    print("get:", "found" if key >= 0 else f"not found ({os.strerror(ctypes.get_errno())})")
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
