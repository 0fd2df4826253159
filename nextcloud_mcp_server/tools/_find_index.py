"""The find index as other tools' answer (docs/ADR/0076): `nc_notes_search_notes` and `nc_search`
answer from the caller's find index when it covers what they ask, and say so; otherwise they ask
Nextcloud as before.

The index covers a caller when the `find` toolset is chosen on this server, the caller may use it
(an OAuth caller holds `find:read`), they already have an index (made by their own `nc_find`: no
other tool makes one), and the index is up to date: kept current in the background and read
within the freshness window, or this call's own sync round read everything that changed (a round
cut short by its time budget leaves the answer to Nextcloud). docs/ADR/0089.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.auth.scopes import missing_scopes
from nextcloud_mcp_server.config.validity import chosen_toolsets
from nextcloud_mcp_server.index.engine import Filters, FindIndex, Hit
from nextcloud_mcp_server.index.query import QueryError, parse_query
from nextcloud_mcp_server.index.service import limits_of
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.tools._context import runtime_of
from nextcloud_mcp_server.toolsets.find import DECLARATION

if TYPE_CHECKING:
    from nextcloud_mcp_server.index.sync import Round
    from nextcloud_mcp_server.runtime import Runtime

__all__ = ["ANSWERED_FROM_INDEX", "from_index", "limits_of", "own_round", "user_key"]

ANSWERED_FROM_INDEX = "find index"


def user_key(ctx: Context[Any, Any], nc: NextcloudClient) -> str:
    """Whose index: the caller's subject (their grant's), or the one configured user."""
    caller = caller_of(ctx)
    return caller.subject if caller is not None and caller.subject else f"nextcloud:{nc.user_id}"


async def from_index(
    ctx: Context[Any, Any], nc: NextcloudClient, query: str, kinds: set[str], *, limit: int
) -> list[Hit] | None:
    """The caller's confirmed hits of `kinds` for `query` from their find index, best first; None
    when the index does not cover this caller now (the tool then asks Nextcloud)."""
    runtime = runtime_of(ctx)
    settings = runtime.settings
    if "find" not in chosen_toolsets(settings):
        return None
    caller = caller_of(ctx)
    if caller is not None and missing_scopes((DECLARATION.read,), caller.scopes):
        return None
    try:
        parsed = parse_query(query)
    except QueryError:
        return None
    index = await runtime.find.index()
    user = user_key(ctx, nc)
    if (await index.status(user)).synced_at is None:
        return None  # no index for this person: nothing changes for them
    work = await own_round(runtime, index, user, nc, kinds)
    if work is not None and not work.complete:
        return None
    hits = await index.search(user, parsed, Filters(kinds=frozenset(kinds)), limit=limit)
    # imported here for start-up cost: the confirmation reaches every kind's client (Deck,
    # Collectives, vCard), which a start with the notes tools need not import (docs/ADR/0093)
    from nextcloud_mcp_server.index.confirm import confirmed

    kept, _ = await confirmed(index, user, hits, nc)
    return kept


async def own_round(
    runtime: Runtime, index: FindIndex, user: str, nc: NextcloudClient, kinds: set[str]
) -> Round | None:
    """The call's own sync round of `kinds`, within FIND_SYNC_SECONDS; None when none is needed:
    the index is kept current in the background and a complete round over every kind started
    within FIND_BACKGROUND_SECONDS + FIND_BACKGROUND_ROUND_SECONDS (docs/ADR/0089)."""
    # imported here for start-up cost, like `confirmed` above (docs/ADR/0093)
    from nextcloud_mcp_server.index.rounds import fresh, sync_round

    background = runtime.find_sync
    if background is not None and fresh(await index.status(user), background.window):
        return None
    settings = runtime.settings
    return await sync_round(index, user, nc, kinds, settings.find_sync_seconds, limits_of(settings))
