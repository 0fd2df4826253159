"""`NextcloudClient`: one user's view of a Nextcloud, built per call from the shared pool.

    client = NextcloudClient(http, BasicCredential("alice", app_password))
    notes = await client.notes.list_notes()
    files = await client.files()          # WebDAV needs the DAV user id, looked up once

This package knows nothing of MCP; it can be used on its own as an async Nextcloud client.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from nextcloud_mcp_server.toolsets.notes.files import NotesFiles

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient
    from nextcloud_mcp_server.nextcloud.dav.carddav import CardDAVClient
    from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
    from nextcloud_mcp_server.toolsets.comments.client import CommentsClient
    from nextcloud_mcp_server.toolsets.deck.client import DeckClient
    from nextcloud_mcp_server.toolsets.search.client import UnifiedSearchClient
    from nextcloud_mcp_server.toolsets.sharing.client import SharesClient
    from nextcloud_mcp_server.toolsets.tables.client import TablesClient
    from nextcloud_mcp_server.toolsets.tags.client import SystemTagsClient
    from nextcloud_mcp_server.toolsets.trash.client import TrashClient
    from nextcloud_mcp_server.toolsets.versions.client import VersionsClient

__all__ = ["DiscoveryCache", "NextcloudClient"]


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

    @property
    def user_id(self) -> str:
        return self.credential.user_id

    @cached_property
    def notes(self) -> NotesClient:
        files = NotesFiles(self.http, self.credential, self.dav_user_id, self.answers)
        return NotesClient(self.http, self.credential, files)

    @cached_property
    def ocs(self) -> OCSClient:
        return OCSClient(self.http, self.credential)

    @cached_property
    def caldav(self) -> CalDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient

        return CalDAVClient(
            self.http, self.credential, self.cache.calendar_homes, self.cache.principals, answers=self.answers
        )

    @cached_property
    def unified_search(self) -> UnifiedSearchClient:
        from nextcloud_mcp_server.toolsets.search.client import UnifiedSearchClient

        return UnifiedSearchClient(self.ocs, self.http.host)

    @cached_property
    def shares(self) -> SharesClient:
        from nextcloud_mcp_server.toolsets.sharing.client import SharesClient

        return SharesClient(self.http, self.credential)

    @cached_property
    def carddav(self) -> CardDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.carddav import CardDAVClient

        return CardDAVClient(self.http, self.credential, self.cache.addressbook_homes, self.cache.principals)

    @cached_property
    def deck(self) -> DeckClient:
        from nextcloud_mcp_server.toolsets.deck.client import DeckClient

        return DeckClient(self.http, self.credential)

    @cached_property
    def tables(self) -> TablesClient:
        from nextcloud_mcp_server.toolsets.tables.client import TablesClient

        return TablesClient(self.http, self.credential, self.ocs)

    async def dav_user_id(self) -> str:
        """The user id in DAV paths, which need not be the login name (LDAP, e-mail logins)."""

        async def ask() -> str:
            return (await self.ocs.current_user()).id

        return await self.cache.dav_user_ids.once(self.credential.user_id, ask)

    async def files(self) -> WebDAVClient:
        from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

        return WebDAVClient(self.http, self.credential, await self.dav_user_id())

    # The file apps' DAV APIs (trash bin, versions, system tags, comments), by DAV user id.

    async def trash(self) -> TrashClient:
        from nextcloud_mcp_server.toolsets.trash.client import TrashClient

        return TrashClient(self.http, self.credential, await self.dav_user_id())

    async def versions(self) -> VersionsClient:
        from nextcloud_mcp_server.toolsets.versions.client import VersionsClient

        return VersionsClient(self.http, self.credential, await self.dav_user_id())

    async def systemtags(self) -> SystemTagsClient:
        from nextcloud_mcp_server.toolsets.tags.client import SystemTagsClient

        return SystemTagsClient(self.http, self.credential, await self.dav_user_id())

    async def comments(self) -> CommentsClient:
        from nextcloud_mcp_server.toolsets.comments.client import CommentsClient

        return CommentsClient(self.http, self.credential, await self.dav_user_id())
