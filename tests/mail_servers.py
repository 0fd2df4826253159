"""A real IMAP and SMTP server on loopback for the Mail toolset's tests.

IMAP: pymap's in-memory `dict` backend with its demo data (user `demouser`, password `demopass`,
four messages in INBOX), run as its own process without TLS. SMTP: aiosmtpd in this process,
keeping every message it receives. Both listen on 127.0.0.1 only, on free ports.
"""

from __future__ import annotations

import imaplib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from tests.processes import free_port

__all__ = ["IMAP_PASSWORD", "IMAP_USER", "MailServers", "mail_servers"]

IMAP_USER, IMAP_PASSWORD = "demouser", "demopass"


@dataclass
class _Keeper:
    received: list[EmailMessage] = field(default_factory=list)
    envelopes: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(parsed)
        self.envelopes.append(list(envelope.rcpt_tos))
        return "250 OK"


@dataclass
class MailServers:
    imap_port: int
    smtp_port: int
    keeper: _Keeper
    smtp: Controller

    def stop_smtp(self) -> None:
        """The SMTP server goes away (its port then refuses connections)."""
        self.smtp.stop()

    @property
    def received(self) -> list[EmailMessage]:
        return self.keeper.received

    def append(self, raw: bytes, mailbox: str = "INBOX") -> None:
        """Put a message into a mailbox over IMAP, as another sender's mail would arrive."""
        with imaplib.IMAP4("127.0.0.1", self.imap_port) as imap:
            imap.login(IMAP_USER, IMAP_PASSWORD)
            status, _ = imap.append(mailbox, None, None, raw)
            assert status == "OK"

    def account(self, email: str) -> dict[str, Any]:
        """The settings Nextcloud's Mail app needs for an account on these servers."""
        return {
            "accountName": "Test account",
            "emailAddress": email,
            "imapHost": "127.0.0.1",
            "imapPort": self.imap_port,
            "imapSslMode": "none",
            "imapUser": IMAP_USER,
            "imapPassword": IMAP_PASSWORD,
            "smtpHost": "127.0.0.1",
            "smtpPort": self.smtp_port,
            "smtpSslMode": "none",
            "smtpUser": IMAP_USER,
            "smtpPassword": IMAP_PASSWORD,
        }


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"pymap exited with {process.returncode}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"pymap did not listen on {port} within {timeout} s") from None
            time.sleep(0.05)


@contextmanager
def mail_servers() -> Iterator[MailServers]:
    imap_port = free_port()
    pymap = Path(sys.executable).with_name("pymap")
    args = [str(pymap), "--host", "127.0.0.1", "--port", str(imap_port), "--no-tls"]
    args += ["--no-service", "admin", "--no-service", "managesieve", "dict", "--demo-data"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    keeper = _Keeper()
    controller = Controller(keeper, hostname="127.0.0.1", port=free_port())
    try:
        _wait_for_port(imap_port, process)
        controller.start()
        yield MailServers(imap_port, controller.port, keeper, controller)
    finally:
        if controller.loop.is_running():
            controller.stop()
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
