"""The course's mail server (``mail:`` in course.yaml): where the portal sends its e-mail (SMTP,
with STARTTLS or TLS from the start), as whom, and which kinds of mail it sends. The password
is never in course.yaml: the setting names the environment variable that holds it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIGNIN, RECEIPT, GRADED, RELEASED, REGRADE, RESET = "signin", "receipt", "graded", "released", "regrade", "reset"
KINDS = (SIGNIN, RECEIPT, GRADED, RELEASED, REGRADE, RESET)
LINKS = (SIGNIN, RESET)  # the kinds that carry a one-time link: its body blanked once sent
SECURITY = ("starttls", "ssl", "none")
PORTS = {"starttls": 587, "ssl": 465, "none": 25}
ADDRESS = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\Z")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
KEYS = ("host", "port", "security", "username", "password_env", "from", "ca_file", "send", "retry_seconds",
        "keep_days")  # fmt: skip
RETRY_SECONDS = 30.0  # a message not sent is tried again after this, then after twice as long each time
KEEP_DAYS = 30  # a sent message is deleted from the outbox this many days after it was sent
MAX_KEEP_DAYS = 3650


def plain_address(value: str) -> bool:
    """Whether ``value`` is one plain e-mail address (no name, no space, no line break): all a header takes."""
    return bool(ADDRESS.match(value))


@dataclass(frozen=True)
class MailSettings:
    """The mail server and the kinds of mail the course sends (``send``: of ``KINDS``)."""

    host: str
    port: int
    security: str  # starttls (the usual: port 587), ssl (TLS from the start: 465) or none (a relay on this machine)
    from_address: str
    username: str | None = None
    password_env: str | None = None  # the environment variable holding the password
    ca_file: Path | None = None  # a private mail server's CA certificate (else the system's)
    send: frozenset[str] = frozenset(KINDS)
    retry_seconds: float = RETRY_SECONDS
    keep_days: int = KEEP_DAYS  # sent messages older than this are deleted from the outbox

    def password(self) -> str | None:
        """The password, read from its environment variable now (None: no login, or the variable unset)."""
        return os.environ.get(self.password_env) if self.password_env else None

    def sends(self, kind: str) -> bool:
        return kind in self.send


def parse_mail(data: Any, root: Path) -> MailSettings:
    """The ``mail:`` key of course.yaml: ValueError naming the key and the fix."""
    if not isinstance(data, dict):
        raise ValueError("'mail' must be 'key: value' lines (host, port, security, username, password_env, from, "
                         "ca_file, send, retry_seconds, keep_days)")  # fmt: skip
    if "password" in data:
        raise ValueError(
            "'mail.password': never write the password in course.yaml: put it in an environment "
            "variable and name it with password_env, like password_env: GRADER_MAIL_PASSWORD"
        )
    for key in data:
        if key not in KEYS:
            raise ValueError(f"unknown key 'mail.{key}'; known keys: {', '.join('mail.' + k for k in KEYS)}")
    host = data.get("host")
    if not isinstance(host, str) or not host.strip() or any(c.isspace() for c in host.strip()):
        raise ValueError(f"'mail.host' must be the mail server's name, like smtp.example.edu; got {host!r}")
    security = data.get("security", "starttls")
    if security not in SECURITY:
        raise ValueError("'mail.security' must be starttls (port 587), ssl (TLS from the start, port 465) or none "
                         f"(a relay on this machine only); got {security!r}")  # fmt: skip
    port = data.get("port", PORTS[security])
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError(f"'mail.port' must be a port number from 1 to 65535, like 587; got {port!r}")
    sender = data.get("from")
    if not isinstance(sender, str) or not plain_address(sender.strip()):
        raise ValueError(f"'mail.from' must be the e-mail address mail comes from, like grader@example.edu; "
                         f"got {sender!r}")  # fmt: skip
    username = data.get("username")
    if username is not None and (not isinstance(username, str) or not username.strip()):
        raise ValueError(f"'mail.username' must be the mail account's user name, or left out (no login); "
                         f"got {username!r}")  # fmt: skip
    password_env = data.get("password_env")
    if password_env is not None and (not isinstance(password_env, str) or not ENV_NAME.match(password_env)):
        raise ValueError("'mail.password_env' must name the environment variable holding the mail password, like "
                         f"GRADER_MAIL_PASSWORD (never the password itself); got {password_env!r}")  # fmt: skip
    if username is not None and password_env is None:
        raise ValueError("'mail.username' is given without 'mail.password_env': name the environment variable "
                         "holding the password, like password_env: GRADER_MAIL_PASSWORD")  # fmt: skip
    if username is not None and security == "none":
        raise ValueError("'mail.security' is none but 'mail.username' is given: a password is never sent "
                         "unencrypted: use starttls or ssl")  # fmt: skip
    ca_file = None
    if data.get("ca_file") is not None:
        given = data["ca_file"]
        ca_file = root / given if isinstance(given, str) else None
        if ca_file is None or not ca_file.is_file():
            raise ValueError(f"'mail.ca_file': no file {given!r} in the course folder: give the mail server's CA "
                             "certificate (PEM), or leave it out to trust the system's")  # fmt: skip
    send = data.get("send", list(KINDS))
    if not isinstance(send, list) or not all(k in KINDS for k in send):
        raise ValueError(f"'mail.send' must be a list of the kinds of mail to send, of {', '.join(KINDS)} "
                         f"([]: none); got {send!r}")  # fmt: skip
    retry = data.get("retry_seconds", RETRY_SECONDS)
    if not isinstance(retry, (int, float)) or isinstance(retry, bool) or not 0 < retry <= 3600:
        raise ValueError("'mail.retry_seconds' must be the seconds before a message not sent is tried again "
                         f"(doubled each time), above 0 and at most 3600, like 30; got {retry!r}")  # fmt: skip
    keep = data.get("keep_days", KEEP_DAYS)
    if not isinstance(keep, int) or isinstance(keep, bool) or not 1 <= keep <= MAX_KEEP_DAYS:
        raise ValueError("'mail.keep_days' must be the days a sent message stays in the outbox (for staff to see) "
                         f"before it is deleted, a whole number from 1 to {MAX_KEEP_DAYS}, like 30; got {keep!r}")  # fmt: skip
    return MailSettings(host.strip(), port, security, sender.strip(), username.strip() if username else None,
                        password_env, ca_file, frozenset(send), float(retry), keep)  # fmt: skip
