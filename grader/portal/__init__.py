"""The course portal (``grader serve``): students upload scripts in a browser, the grader grades
them with the calls ``grader grade`` makes, and each person sees only what they may.

Its modules need the ``portal`` extra (Starlette, uvicorn, SQLAlchemy, Alembic, argon2, zxcvbn...);
this package's ``__init__`` imports none of them, so the CLI can say what to install."""

from __future__ import annotations

import importlib.util

from ..errors import GraderError

EXTRA = (
    "starlette",
    "uvicorn",
    "jinja2",
    "sqlalchemy",
    "alembic",
    "argon2",
    "itsdangerous",
    "python_multipart",
    "jwt",
    "cryptography",
    "zxcvbn",
)


def check_extra() -> None:
    """GraderError naming the install command when a package of the ``portal`` extra is missing."""
    missing = [name for name in EXTRA if not _installed(name)]
    if missing:
        raise GraderError(f'the portal needs its extra ({", ".join(missing)} missing): pip install "grader[portal]"')


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken install, or a finder that refuses it
        return False
