"""Whose find index is kept current in the background, and with which credential (docs/ADR/0084).

- Single-user mode: the configured user, once their index exists (their own first `nc_find`
  makes it; the operator chose the find toolset and holds the credential, so no question is asked).
- Offline access: every person whose grant carries their agreement to indexing (given to
  `nc_find`'s question), with the credential minted from that grant.
- Pass-through: none (the server holds no credential; the index grows during the person's calls).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.config.validity import chosen_toolsets, on_demand_toolsets
from nextcloud_mcp_server.index.background import BackgroundSync
from nextcloud_mcp_server.index.service import limits_of

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings
    from nextcloud_mcp_server.index.service import FindService
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.storage.backends import StoreBackend

ClientFor = Callable[[Caller | None], Awaitable["NextcloudClient"]]

__all__ = ["background_sync"]


def background_sync(
    settings: Settings, find: FindService, store: StoreBackend | None, client_for: ClientFor
) -> BackgroundSync | None:
    """The background sync this deployment runs, or None (switched off, no find toolset, or no
    credential held); `client_for(caller)` is the runtime's."""
    offered = chosen_toolsets(settings) | on_demand_toolsets(settings)  # listed, or enabled per user
    if settings.find_background_seconds <= 0 or "find" not in offered:
        return None
    if not settings.oauth_enabled:

        async def indexed(user: str) -> bool:  # an index never made is not made here
            return find.made() and (await (await find.index()).status(user)).synced_at is not None

        async def configured(limit: int) -> list[str]:
            if not find.made():
                return []
            user = f"nextcloud:{(await client_for(None)).user_id}"  # as tools/_find_index.py
            return [user] if await indexed(user) else []

        async def own(user: str) -> NextcloudClient:
            return await client_for(None)

        return _made(settings, find, configured, indexed, own)
    if store is None:
        return None

    async def agreed(limit: int) -> list[str]:
        return await store.find_consents.agreed(limit)

    async def still_agreed(subject: str) -> bool:
        found = await store.find_consents.get(subject)
        return found is not None and found.answer == "agreed"

    async def theirs(subject: str) -> NextcloudClient:
        return await client_for(Caller(subject=subject, user_id="", scopes=frozenset(), token=""))

    return _made(settings, find, agreed, still_agreed, theirs)


def _made(
    settings: Settings,
    find: FindService,
    users: Callable[[int], Awaitable[list[str]]],
    wanted: Callable[[str], Awaitable[bool]],
    client_for: Callable[[str], Awaitable[NextcloudClient]],
) -> BackgroundSync:
    return BackgroundSync(
        find,
        users,
        wanted,
        client_for,
        every=settings.find_background_seconds,
        round_seconds=settings.find_background_round_seconds,
        at_once=settings.find_background_users_at_once,
        limits=limits_of(settings),
    )
