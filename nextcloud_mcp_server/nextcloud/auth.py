"""Credentials a request to Nextcloud can carry.

A credential is a value, not a connection: the one pooled HTTP client serves every user, and each
request carries the credential of the user it is made for. `repr()` never shows the secret.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

__all__ = ["BasicCredential", "BearerCredential", "Credential"]


@dataclass(frozen=True)
class BasicCredential:
    """A login name and (app) password, sent as HTTP Basic."""

    username: str
    password: str = field(repr=False)

    @property
    def user_id(self) -> str:
        return self.username

    def authorization(self) -> str:
        raw = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def basic_fallback(self) -> BasicCredential | None:
        """Basic credentials need no fallback."""
        return None


@dataclass(frozen=True)
class BearerCredential:
    """An OAuth access token for Nextcloud, and the Nextcloud user it belongs to."""

    token: str = field(repr=False)
    username: str

    @property
    def user_id(self) -> str:
        return self.username

    def authorization(self) -> str:
        return f"Bearer {self.token}"

    def basic_fallback(self) -> BasicCredential | None:
        """The same token as a Basic password, which Nextcloud accepts where it refuses Bearer."""
        return BasicCredential(self.username, self.token)


Credential = BasicCredential | BearerCredential
