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
    """A login name and (app) password, sent as HTTP Basic. `uid` is the Nextcloud user id when it
    differs from the login name (e.g. a login by e-mail address); it names the user's DAV paths."""

    username: str
    password: str = field(repr=False)
    uid: str = ""

    @property
    def user_id(self) -> str:
        return self.uid or self.username

    def authorization(self) -> str:
        raw = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def basic_fallback(self) -> BasicCredential | None:
        """Basic credentials need no fallback."""
        return None


@dataclass(frozen=True)
class BearerCredential:
    """An OAuth access token for Nextcloud, and the Nextcloud user it belongs to.
    `basic_for_notes`: a token of Nextcloud's own oauth2 app, known to work as a Basic password,
    which the Notes API (refusing Bearer) gets that way from the first call. `login`: the name
    that Basic password goes with when it is not the user id (the person signed in with their
    e-mail address, or an LDAP login name)."""

    token: str = field(repr=False)
    username: str
    basic_for_notes: bool = False
    login: str = ""

    @property
    def user_id(self) -> str:
        return self.username

    def authorization(self) -> str:
        return f"Bearer {self.token}"

    def basic_fallback(self) -> BasicCredential | None:
        """The same token as a Basic password, which Nextcloud accepts where it refuses Bearer."""
        return BasicCredential(self.login or self.username, self.token, uid=self.username)


Credential = BasicCredential | BearerCredential
