"""`NextcloudClient`: one user's view of a Nextcloud, built per call from the shared pool.

    client = NextcloudClient(http, BasicCredential("alice", app_password))
    files = await client.files()            # WebDAV needs the DAV user id, looked up once
    deck = client.api(DeckClient)           # an app's client, from its toolset's folder
    trash = await client.dav_api(TrashClient)   # an app's client addressed by the DAV user id

The core protocols (OCS, WebDAV, CalDAV, CardDAV) have an accessor here; an app's client lives in
its toolset's folder (`toolsets/<name>/client.py`) and builds itself from this one (`of`), so adding
a toolset never touches this module (docs/ADR/0052-toolsets-as-slices.md).

This package knows nothing of MCP; it can be used on its own as an async Nextcloud client.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Protocol, Self, TypeVar, cast

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient
    from nextcloud_mcp_server.nextcloud.dav.carddav import CardDAVClient
    from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

__all__ = ["Api", "DavApi", "DiscoveryCache", "NextcloudClient"]


class Api(Protocol):
    """An app's client that builds itself from one user's `NextcloudClient` (`nc.api(Cls)`)."""

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self: ...


class DavApi(Protocol):
    """An app's client addressed by the user's DAV id (`await nc.dav_api(Cls)`)."""

    @classmethod
    def of(cls, nextcloud: NextcloudClient, dav_user_id: str) -> Self: ...


A = TypeVar("A", bound=Api)
D = TypeVar("D", bound=DavApi)


class NextcloudClient:
    """The APIs of one Nextcloud, for the user whose credential it carries."""

    def __init__(
        self,
        http: NextcloudHTTP,
        credential: Credential,
        *,
        cache: DiscoveryCache | None = None,
        answers: KeptAnswers | None = None,
    ) -> None:
        self.http = http
        self.credential = credential
        self.cache = cache or DiscoveryCache()
        # answers kept per user with Nextcloud's validator (kept.py): shared by the process
        self.answers = answers if answers is not None else KeptAnswers()
        self._apis: dict[type, object] = {}

    @property
    def user_id(self) -> str:
        return self.credential.user_id

    def api(self, kind: type[A]) -> A:
        """The client of an app (`nc.api(DeckClient)`), built once per `NextcloudClient` by the
        class's own `of(nc)`."""
        found = self._apis.get(kind)
        if found is None:
            found = self._apis[kind] = kind.of(self)
        return cast("A", found)

    async def dav_api(self, kind: type[D]) -> D:
        """The client of an app addressed by the DAV user id (`await nc.dav_api(TrashClient)`),
        built once per `NextcloudClient` by the class's own `of(nc, dav_user_id)`."""
        found = self._apis.get(kind)
        if found is None:
            found = self._apis[kind] = kind.of(self, await self.dav_user_id())
        return cast("D", found)

    @cached_property
    def ocs(self) -> OCSClient:
        return OCSClient(self.http, self.credential, self.cache.capabilities)

    @cached_property
    def caldav(self) -> CalDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient

        return CalDAVClient(
            self.http,
            self.credential,
            self.cache.calendar_homes,
            self.cache.principals,
            answers=self.answers,
            dav_user=self.dav_user_id,
        )

    @cached_property
    def carddav(self) -> CardDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.carddav import CardDAVClient

        return CardDAVClient(
            self.http,
            self.credential,
            self.cache.addressbook_homes,
            self.cache.principals,
            dav_user=self.dav_user_id,
        )

    async def dav_user_id(self) -> str:
        """The user id in DAV paths, which need not be the login name (LDAP, e-mail logins)."""

        async def ask() -> str:
            return (await self.ocs.current_user()).id

        return await self.cache.dav_user_ids.once(self.credential.user_id, ask)

    async def files(self) -> WebDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

        return WebDAVClient(self.http, self.credential, await self.dav_user_id())
