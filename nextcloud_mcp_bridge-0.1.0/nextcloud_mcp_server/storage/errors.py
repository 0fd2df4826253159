"""Failures of the store (kept import-light: the tool registry uses them)."""

from __future__ import annotations

__all__ = ["DecryptionFailed", "GrantUnreadable", "InvalidKey"]


class InvalidKey(ValueError):
    """A configured encryption key is malformed."""


class DecryptionFailed(Exception):
    """A stored secret cannot be decrypted: unknown key, wrong key, moved or tampered data."""


class GrantUnreadable(DecryptionFailed):
    """A user's stored grant cannot be decrypted (corrupted, tampered, its key removed). Its owner
    can still disconnect (the row is deleted) or connect again (the row is replaced)."""

    def __init__(self, subject: str, reason: str) -> None:
        super().__init__(reason)
        self.subject = subject
