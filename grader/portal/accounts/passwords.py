"""Passwords: argon2 hashes, set and checked (a check as slow for an unknown address), and
refused when a guesser would try them first.

A password is refused below PASSWORD_MIN characters, and when zxcvbn (Dropbox's estimator,
the Python port, MIT, pure Python) puts it under 10^8 guesses (its score 3): a common
password or word, a keyboard walk, a repeat or a sequence, a date, l33t spelling, and any
of these built on the person's own e-mail or name, which it is given. NIST SP 800-63B asks a
service to refuse "commonly-used, expected, or compromised" values, including ones derived
from the user's name or the service, and to impose no composition rules; zxcvbn does both,
where a bundled list of common passwords would only catch exact entries (``aaaaaaaaaa`` is
in few lists, ``Student3student3`` in none) and would need rules of our own for every
variant. Its cost: a dependency of ~1 MB of word lists, English-centred, and a shared
dictionary that is not safe between threads (so one check runs at a time: 2 to 70 ms, by length).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session
from zxcvbn import zxcvbn

from ...errors import GraderError
from ..database.models import User

PASSWORD_MIN = 10


GUESSABLE = 3  # zxcvbn's score a password needs: 3 is 10^8 guesses or more


CHECKED = 72  # the characters zxcvbn reads (it refuses longer): a longer password is judged by its start


ADVICE = ("choose a longer one, such as three or four words that do not go together, that is neither a common "
          "password nor made of your name or e-mail")  # fmt: skip


_hasher = PasswordHasher()


_one_check = threading.Lock()  # zxcvbn keeps the person's words in a module-level dictionary


def weak_password(password: str, words: Sequence[str] = ()) -> str | None:
    """Why a guesser would try ``password`` early (one line that says what to do), or None when
    it is good: too short, or guessed in under 10^8 tries, the person's ``words`` (their e-mail,
    name, the course) counted as known to the guesser."""
    if len(password) < PASSWORD_MIN:
        return f"a password needs at least {PASSWORD_MIN} characters: {ADVICE}"
    with _one_check:
        found = zxcvbn(password[:CHECKED], user_inputs=_known(words))
    if found["score"] >= GUESSABLE:
        return None
    warning = str(found["feedback"].get("warning") or "").rstrip(".")
    if any(m.get("dictionary_name") == "user_inputs" for m in found["sequence"]):
        warning = "it is made of your name, your e-mail or the course's"
    why = f" ({warning[0].lower() + warning[1:]})" if warning else ""
    return f"this password is too easy to guess{why}: {ADVICE}"


def _known(words: Sequence[str]) -> list[str]:
    """The words a guesser knows of a person: each given, its parts (an e-mail's local part and
    domain; the words between dots, dashes, spaces and the like), and each of those run together."""
    out: list[str] = []
    for word in words:
        word = word.strip().lower()
        for part in [word, *word.split("@")]:
            pieces = [w for w in re.split(r"[\W_]+", part) if w]
            out += [part, "".join(pieces), *pieces]
    return [w for w in dict.fromkeys(out) if w]


def set_password(user: User, password: str, words: Sequence[str] = ()) -> None:
    """Set the user's password: GraderError saying what to do when a guesser would try it
    early (``weak_password``, the user's e-mail and name among the ``words`` known)."""
    weak = weak_password(password, [user.email, user.name, *words])
    if weak is not None:
        raise GraderError(weak)
    user.password_hash = _hasher.hash(password)


def check_password(session: Session, email: str, password: str) -> User | None:
    """The user with this e-mail and password, else None (also when no password was set)."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.password_hash:
        _hasher.hash(password)  # as long as a real check: the time does not tell who has an account
        return None
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    return user
