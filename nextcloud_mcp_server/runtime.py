"""The process-wide resources a running server owns, opened and closed by the app's lifespan.

The HTTP pool is created on first use, not at start-up: a client that only lists tools never pays
for TLS contexts and connection pools (cold start is measured in `bench/cold_start.py`).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from nextcloud_mcp_server.auth.credentials import CredentialResolver, StaticCredential
from nextcloud_mcp_server.config import ConfigError, Settings
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache

if TYPE_CHECKING:
    import httpx

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
        self.credentials = credentials or self._default_credentials(settings)
        self.discovery = DiscoveryCache()

    @staticmethod
    def _default_credentials(settings: Settings) -> CredentialResolver:
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

    async def client_for_caller(self) -> NextcloudClient:
        from nextcloud_mcp_server.nextcloud.client import NextcloudClient

        credential = await self.credentials.credential_for_caller()
        return NextcloudClient(self.http, credential, cache=self.discovery)

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
