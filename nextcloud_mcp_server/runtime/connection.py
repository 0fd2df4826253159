"""The connection to Nextcloud a process keeps: the pooled HTTP client (made at the first request,
so a client that only lists tools never pays for TLS contexts and pools), what is discovered once
per user (docs/ADR/0069), the kept answers, each user's apps, and the check of Nextcloud."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.diagnostics import StartupCheck
from nextcloud_mcp_server.nextcloud.apps import AppsCache
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["NextcloudConnection"]


class NextcloudConnection:
    """One Nextcloud, every user's: one pool, and per user what is discovered and kept."""

    def __init__(self, settings: Settings, *, who: Callable[[], Awaitable[str]] | None = None) -> None:
        """`who`: in single-user mode, who the configured credentials belong to, for the check."""
        self.settings = settings
        self._http: NextcloudHTTP | None = None
        self.startup_check = StartupCheck(settings, who=who)
        self.discovery = DiscoveryCache()
        # per user, always revalidated with Nextcloud (nextcloud/kept.py)
        self.answers = KeptAnswers(max_bytes=settings.nextcloud_kept_answers_mb * 1024 * 1024)
        self.apps = AppsCache(settings.nextcloud_apps_cache_seconds)  # per user (tools/_apps.py)

    @property
    def http(self) -> NextcloudHTTP:
        if self._http is None:
            from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP  # start-up cost (ADR 0069)

            settings = self.settings
            self._http = NextcloudHTTP(settings.nextcloud_host or "", **settings.nextcloud_http_options())
        return self._http

    def client(self, credential: Credential) -> NextcloudClient:
        """A client acting with `credential`, sharing the pool, the discovery and kept answers."""
        from nextcloud_mcp_server.nextcloud.client import NextcloudClient  # start-up cost (ADR 0069)

        return NextcloudClient(self.http, credential, cache=self.discovery, answers=self.answers)

    async def whoami(self, token: str) -> str | None:
        """Who Nextcloud says a bearer token belongs to (for Nextcloud's own oauth2 tokens)."""
        from nextcloud_mcp_server.nextcloud.auth import BearerCredential
        from nextcloud_mcp_server.nextcloud.errors import Forbidden, Unauthorized
        from nextcloud_mcp_server.nextcloud.ocs import OCSClient

        try:
            return (await OCSClient(self.http, BearerCredential(token, "")).current_user()).id
        except (Unauthorized, Forbidden):
            return None

    async def aclose(self) -> None:
        await self.startup_check.aclose()
        if self._http is not None:
            await self._http.aclose()
            self._http = None
