"""The one place that turns "who is calling" into "which Nextcloud credential to use".

Tools never branch on the deployment mode: they ask the resolver for the caller's credential.

| mode                   | caller known by                       | Nextcloud sees                        |
|------------------------|---------------------------------------|---------------------------------------|
| single user            | nobody else can call (stdio/loopback) | NEXTCLOUD_USERNAME + app password     |
| OAuth, pass-through    | bearer token validated by us          | the same token (token reuse, RFC 8707)|
"""

from __future__ import annotations

from typing import Protocol

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential, Credential

__all__ = ["CredentialResolver", "NoCaller", "PassThroughCredential", "StaticCredential"]


class NoCaller(Exception):
    """An OAuth-mode tool ran without an authenticated caller (should not happen behind the gate)."""


class CredentialResolver(Protocol):
    async def credential_for(self, caller: Caller | None) -> Credential:
        """The Nextcloud credential for this caller."""

    def forget(self, subject: str) -> None:
        """Drop anything cached for this subject (after a grant changed)."""


class StaticCredential:
    """Single-user mode: every call acts as the configured user."""

    def __init__(self, username: str, password: str) -> None:
        self._credential = BasicCredential(username, password)

    async def credential_for(self, caller: Caller | None) -> Credential:
        return self._credential

    def forget(self, subject: str) -> None:
        """Nothing is cached per subject."""


class PassThroughCredential:
    """OAuth without offline access: Nextcloud gets the caller's own (validated) token.

    This is token reuse, not forwarding of unchecked tokens: we accept a token only when its
    audience names us (RFC 7519 §4.1.3); Nextcloud then validates it for itself, as RFC 8707
    allows when one token is issued for several resources.
    """

    async def credential_for(self, caller: Caller | None) -> Credential:
        if caller is None:
            raise NoCaller("no authenticated caller")
        return BearerCredential(caller.token, caller.user_id)

    def forget(self, subject: str) -> None:
        """Nothing is cached per subject."""
