"""`nc_search` from the caller's find index for the providers it covers (docs/ADR/0076;
`tools/_find_index.py` says when): files, notes, calendar events, tasks, contacts, Deck cards and
Collectives pages are answered from the index (contents too, not only names); other providers,
and every next page asked with cursors, still go to Nextcloud's unified search."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.index.engine import END_MARK, START_MARK, Hit, collection_of
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.resources._uris import contact_uri, file_uri, note_uri
from nextcloud_mcp_server.tools._find_index import from_index

__all__ = ["KIND_OF_PROVIDER", "indexed_results"]

# Nextcloud's unified search provider ids -> the index's kinds
KIND_OF_PROVIDER = {
    "files": "file",
    "notes": "note",
    "calendar": "event",
    "tasks": "task",
    "contacts": "contact",
    "deck": "card",
    "collectives-pages": "page",
}
PROVIDER_OF_KIND = {kind: provider for provider, kind in KIND_OF_PROVIDER.items()}


def _result(hit: Hit) -> dict[str, Any]:
    excerpt = hit.excerpt.replace(START_MARK, "").replace(END_MARK, "")
    attributes = {"excerpt": excerpt[:300], "key": hit.key}
    if hit.kind == "file":
        url, attributes["path"] = file_uri(hit.key), hit.key
    elif hit.kind == "note":
        url = "" if (note := ascii_number(hit.key)) is None else note_uri(note)
    elif hit.kind == "contact":
        href, _, uid = hit.key.partition("|")
        url = contact_uri(collection_of(href).rstrip("/").rpartition("/")[2], uid)
    else:
        url = ""
    where = f"in {hit.location}" if hit.location else ""
    return {"provider": PROVIDER_OF_KIND[hit.kind], "title": hit.title, "subline": where, "url": url} | {
        "attributes": attributes
    }


async def indexed_results(
    ctx: Context[Any, Any], nc: NextcloudClient, term: str, providers: list[str], limit: int
) -> tuple[list[dict[str, Any]], list[str]] | None:
    """Results (a `SearchResult`'s fields) for the `providers` the index covers, at most `limit`
    each, and those providers; None when the index does not cover the caller or none of them."""
    kinds = {KIND_OF_PROVIDER[p] for p in providers if p in KIND_OF_PROVIDER}
    if not kinds:
        return None
    hits = await from_index(ctx, nc, term, kinds, limit=min(50, limit * len(kinds)))
    if hits is None:
        return None
    counted: dict[str, int] = {}
    results = []
    for hit in hits:
        counted[hit.kind] = counted.get(hit.kind, 0) + 1
        if counted[hit.kind] <= limit:
            results.append(_result(hit))
    return results, sorted(PROVIDER_OF_KIND[k] for k in kinds)
