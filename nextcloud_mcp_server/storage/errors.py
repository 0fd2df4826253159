"""Failures of the store (kept import-light: the tool registry uses them)."""

from __future__ import annotations

__all__ = ["DecryptionFailed", "InvalidKey"]


class InvalidKey(ValueError):
    """A configured encryption key is malformed."""


class DecryptionFailed(Exception):
    """A stored secret cannot be decrypted: unknown key, wrong key, moved or tampered data."""
