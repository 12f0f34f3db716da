"""Sending one message over SMTP (the standard library's smtplib): STARTTLS or TLS from the
start, the server's certificate verified (against the course's CA file, else the system's),
then a login; every failure a ``MailError`` in one line."""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from ...errors import GraderError
from ..course.mail import MailSettings, plain_address

TIMEOUT = 20.0  # seconds: a server slower than this is tried again later


class MailError(GraderError):
    """A message not sent: the mail server refused it or could not be reached (kept as the message's last error)."""


def message(settings: MailSettings, to: str, subject: str, body: str, name: str = "") -> EmailMessage:
    """The e-mail: plain text, From the course's address, To ``to``; MailError for an address or a
    subject with a line break (or anything an address never has), which would add headers."""
    if not plain_address(to) or any(c in subject for c in "\r\n") or any(c in name for c in "\r\n"):
        raise MailError(f"refused: a line break or no plain e-mail address in the recipient or subject ({to!r})")
    msg = EmailMessage()
    msg["From"] = settings.from_address
    local, _, domain = to.partition("@")
    msg["To"] = Address(display_name=name, username=local, domain=domain) if name else to
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=settings.from_address.partition("@")[2])
    msg.set_content(body)
    return msg


def tls_context(settings: MailSettings) -> ssl.SSLContext:
    """A client's TLS context verifying the server's certificate and name."""
    return ssl.create_default_context(cafile=str(settings.ca_file) if settings.ca_file else None)


def deliver(settings: MailSettings, msg: EmailMessage, timeout: float = TIMEOUT) -> None:
    """Send ``msg`` through the course's mail server: MailError, in one line, when it is not sent."""
    where = f"{settings.host}:{settings.port}"
    password = settings.password()
    if settings.username and password is None:
        raise MailError(f"the environment variable {settings.password_env} is not set: set it to the mail "
                        "password where grader serve and grader worker run")  # fmt: skip
    try:
        if settings.security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(settings.host, settings.port, timeout=timeout,
                                                    context=tls_context(settings))  # fmt: skip
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=timeout)
        with client:
            if settings.security == "starttls":
                client.starttls(context=tls_context(settings))
            if settings.username:
                assert password is not None
                client.login(settings.username, password)
            client.send_message(msg)
    except smtplib.SMTPAuthenticationError as e:
        raise MailError(f"{where} refused the login of {settings.username!r} ({e.smtp_code}): check mail.username "
                        f"and the password in {settings.password_env}") from None  # fmt: skip
    except smtplib.SMTPNotSupportedError:
        raise MailError(f"{where} offers no STARTTLS or no login: check mail.security and mail.port") from None
    except smtplib.SMTPResponseException as e:
        text = e.smtp_error.decode(errors="replace") if isinstance(e.smtp_error, bytes) else str(e.smtp_error)
        raise MailError(f"{where} refused the message ({e.smtp_code} {' '.join(text.split())})") from None
    except smtplib.SMTPRecipientsRefused as e:
        raise MailError(f"{where} refused the recipient {', '.join(e.recipients)}") from None
    except ssl.SSLCertVerificationError as e:
        raise MailError(f"{where}: the mail server's certificate is not trusted ({e.verify_message}): give its CA "
                        "certificate as mail.ca_file, or check mail.host") from None  # fmt: skip
    except ssl.SSLError as e:
        raise MailError(
            f"{where}: TLS failed ({e.reason or e}): check mail.security, mail.port and mail.ca_file"
        ) from None
    except (smtplib.SMTPException, socket.timeout, OSError) as e:
        raise MailError(f"cannot reach the mail server {where}: {getattr(e, 'strerror', None) or e}") from None
