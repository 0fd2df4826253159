"""The identity provider as this server meets it (OAuth mode): the bearer token verifier with its
own bounded HTTP client, made at first use, and this server's own client at the provider."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from nextcloud_mcp_server.config import Settings

if TYPE_CHECKING:
    from nextcloud_mcp_server.auth.oidc_client import OIDCClient
    from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
    from nextcloud_mcp_server.authz.service import AuthServer
    from nextcloud_mcp_server.outbound.client import BoundedClient

__all__ = ["IdentityProvider"]


class IdentityProvider:
    def __init__(
        self,
        settings: Settings,
        *,
        nextcloud_whoami: Callable[[str], Awaitable[str | None]],
        own: Callable[[], AuthServer | None],
    ) -> None:
        """`own`: this server as authorization server, when it is one (asked at first use)."""
        self.settings = settings
        self._whoami = nextcloud_whoami
        self._own = own
        self._http: BoundedClient | None = None
        self._verifier: BearerTokenVerifier | None = None

    @property
    def verifier(self) -> BearerTokenVerifier:
        """The bearer token verifier, with its own HTTP client for the IdP."""
        if self._verifier is None:
            from nextcloud_mcp_server.auth.oidc import idp_client
            from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier

            self._http = idp_client(self.settings)
            self._verifier = BearerTokenVerifier(
                self.settings, self._http, nextcloud_whoami=self._whoami, own=self._own()
            )
        return self._verifier

    @property
    def oidc_client(self) -> OIDCClient:
        """This server's own client at the identity provider (offline access)."""
        from nextcloud_mcp_server.auth.oidc_client import OIDCClient

        verifier = self.verifier
        assert self._http is not None
        return OIDCClient(self.settings, self._http, verifier.metadata, verifier.jwks)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
