"""A real SMTP server on loopback for the portal's mail tests (aiosmtpd): STARTTLS required
before anything, then AUTH (one user and password), with a self-signed certificate made in
the test's folder (``ca_file`` is what course.yaml's mail.ca_file names). What arrives is
kept, parsed, in ``messages``; ``start`` and ``stop`` bring the server up and down on one port."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import ipaddress
import socket
import threading
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

import ssl  # noqa: E402

from aiosmtpd.controller import Controller  # noqa: E402
from aiosmtpd.smtp import AuthResult, LoginPassword  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

USER, PASSWORD = "grader", "mail-secret-1"
PASSWORD_ENV = "GRADER_TEST_MAIL_PASSWORD"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key, as PEM files in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    when = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(when - dt.timedelta(days=1))
            .not_valid_after(when + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))  # fmt: skip
    cert_path, key_path = folder / "mail-ca.pem", folder / "mail-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return cert_path, key_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mailbox:
    """The SMTP server and what it received."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.ca_file, key = self_signed(folder)
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(self.ca_file, key)
        self.port = free_port()
        self.messages: list[EmailMessage] = []
        self.logins: list[str] = []
        self._lock = threading.Lock()
        self._controller: Controller | None = None

    def settings(self, **more: object) -> dict:
        """course.yaml's mail: section for this server (the CA file copied into ``course``)."""
        return {"host": "127.0.0.1", "port": self.port, "security": "starttls", "username": USER,
                "password_env": PASSWORD_ENV, "from": "grader@example.edu", "ca_file": "mail-ca.pem",
                "retry_seconds": 1, **more}  # fmt: skip

    async def handle_DATA(self, server, session, envelope) -> str:
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._lock:
            self.messages.append(msg)  # type: ignore[arg-type]
        return "250 OK"

    def _auth(self, server, session, envelope, mechanism, data) -> AuthResult:
        ok = isinstance(data, LoginPassword) and data.login == USER.encode() and data.password == PASSWORD.encode()
        if ok:
            self.logins.append(USER)
        return AuthResult(success=ok, handled=False)

    def start(self) -> None:
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port, tls_context=self.tls,
                                      require_starttls=True, auth_required=True, authenticator=self._auth)  # fmt: skip
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def to(self, address: str, subject_start: str = "") -> list[EmailMessage]:
        with self._lock:
            return [m for m in self.messages if m["To"].addresses[0].addr_spec == address
                    and m["Subject"].startswith(subject_start)]  # fmt: skip

    def wait(self, address: str, subject_start: str, seconds: float = 60.0) -> EmailMessage:
        """The first message to ``address`` whose subject starts so, once it arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = self.to(address, subject_start)
            if found:
                return found[0]
            time.sleep(0.1)
        with self._lock:
            seen = [(str(m["To"]), str(m["Subject"])) for m in self.messages]
        raise AssertionError(f"no mail {subject_start!r} to {address} within {seconds} s; arrived: {seen}")


def body(msg: EmailMessage) -> str:
    part = msg.get_body(("plain",))
    assert part is not None
    return part.get_content()
