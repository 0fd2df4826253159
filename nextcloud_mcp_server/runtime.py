"""The process-wide resources a running server owns, opened and closed by the app's lifespan.

The HTTP pool is created on first use, not at start-up: a client that only lists tools never pays
for TLS contexts and connection pools (cold start is measured in `bench/cold_start.py`).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.credentials import CredentialResolver, PassThroughCredential, StaticCredential
from nextcloud_mcp_server.config import ConfigError, Settings
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache

if TYPE_CHECKING:
    import httpx

    from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["Runtime"]


class Runtime:
    """Settings, the pooled Nextcloud HTTP client and the credential resolver."""

    def __init__(
        self,
        settings: Settings,
        *,
        credentials: CredentialResolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._transport = transport
        self._http: NextcloudHTTP | None = None
        self._idp_http: httpx.AsyncClient | None = None
        self._verifier: BearerTokenVerifier | None = None
        self.credentials = credentials or self._default_credentials(settings)
        self.discovery = DiscoveryCache()

    @staticmethod
    def _default_credentials(settings: Settings) -> CredentialResolver:
        if settings.oauth_enabled:
            problems = settings.problems_for_oauth()
            if settings.enable_offline_access:
                problems.append("ENABLE_OFFLINE_ACCESS=true is not supported by this version")
            if problems:
                raise ConfigError(problems)
            return PassThroughCredential()
        problems = settings.problems_for_nextcloud()
        if problems:
            raise ConfigError(problems)
        username, password = settings.nextcloud_username or "", settings.nextcloud_password
        return StaticCredential(username, password.get_secret_value() if password else "")

    @property
    def http(self) -> NextcloudHTTP:
        if self._http is None:
            from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

            settings = self.settings
            self._http = NextcloudHTTP(
                settings.nextcloud_host or "",
                timeout=settings.nextcloud_timeout_seconds,
                verify=settings.tls_verify(),
                max_retries=settings.nextcloud_max_retries,
                transport=self._transport,
            )
        return self._http

    async def client_for(self, caller: Caller | None) -> NextcloudClient:
        from nextcloud_mcp_server.nextcloud.client import NextcloudClient

        credential = await self.credentials.credential_for(caller)
        return NextcloudClient(self.http, credential, cache=self.discovery)

    @property
    def verifier(self) -> BearerTokenVerifier:
        """The bearer token verifier (OAuth mode), with its own HTTP client for the IdP."""
        if self._verifier is None:
            import httpx

            from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier

            self._idp_http = httpx.AsyncClient(timeout=httpx.Timeout(10.0), follow_redirects=False)
            self._verifier = BearerTokenVerifier(self.settings, self._idp_http, nextcloud_whoami=self._whoami)
        return self._verifier

    async def _whoami(self, token: str) -> str | None:
        """Who Nextcloud says a bearer token belongs to (for Nextcloud's own oauth2 tokens)."""
        from nextcloud_mcp_server.nextcloud.auth import BearerCredential
        from nextcloud_mcp_server.nextcloud.errors import Forbidden, Unauthorized
        from nextcloud_mcp_server.nextcloud.ocs import OCSClient

        try:
            return (await OCSClient(self.http, BearerCredential(token, "")).current_user()).id
        except (Unauthorized, Forbidden):
            return None

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._idp_http is not None:
            await self._idp_http.aclose()
            self._idp_http = None
