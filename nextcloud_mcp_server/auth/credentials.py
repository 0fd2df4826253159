"""The one place that turns "who is calling" into "which Nextcloud credential to use".

Tools never branch on the deployment mode: they ask the resolver for the caller's credential.

| mode                   | caller known by                      | Nextcloud sees                       |
|------------------------|--------------------------------------|--------------------------------------|
| single user            | nobody else can call (stdio/loopback) | NEXTCLOUD_USERNAME + app password    |
"""

from __future__ import annotations

from typing import Protocol

from nextcloud_mcp_server.nextcloud.auth import BasicCredential, Credential

__all__ = ["CredentialResolver", "StaticCredential"]


class CredentialResolver(Protocol):
    async def credential_for_caller(self) -> Credential:
        """The credential for the user behind the current request."""


class StaticCredential:
    """Single-user mode: every call acts as the configured user."""

    def __init__(self, username: str, password: str) -> None:
        self._credential = BasicCredential(username, password)

    async def credential_for_caller(self) -> Credential:
        return self._credential
