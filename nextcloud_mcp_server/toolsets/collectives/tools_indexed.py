"""`nc_collectives_search_pages` from the caller's find index when it covers them (docs/ADR/0076;
`tools/_find_index.py` says when)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.index.engine import END_MARK, START_MARK
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._find_index import from_index

__all__ = ["indexed_pages"]

MORE = 4  # hits asked of the index per hit wanted when one collective is asked for


async def indexed_pages(
    ctx: Context[Any, Any], query: str, collective_id: int | None, limit: int
) -> list[dict[str, Any]] | None:
    """The pages the index finds for `query` (in `collective_id` only, when given), best first;
    None when the index does not cover the caller (ask Nextcloud). Each is a `PageHit`'s fields."""
    nc = await nextcloud_for(ctx)
    hits = await from_index(ctx, nc, query, {"page"}, limit=min(50, limit * (MORE if collective_id else 1)))
    if hits is None:
        return None
    words = [w.casefold() for w in query.split() if w.isalnum()]
    found = []
    for hit in hits:
        collective_text, _, page_text = hit.key.partition("/")
        collective, page = ascii_number(collective_text), ascii_number(page_text)
        if collective is None or page is None:
            continue
        if collective_id is not None and collective != collective_id:
            continue
        snippet = hit.excerpt.replace(START_MARK, "").replace(END_MARK, "")
        in_title = bool(words) and all(w in hit.title.casefold() for w in words)
        matched_in = "title" if in_title else "content"
        found.append(
            {"collective_id": collective, "id": page, "title": hit.title, "snippet": snippet}
            | {"matched_in": matched_in}
        )
    return found[:limit]
