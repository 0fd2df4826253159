"""Nextcloud's unified search (OCS `search/providers`): one query, answered by each app's provider.

What a real Nextcloud 29 answers (see `tests/fixtures/nextcloud/search_*.txt`):
- the providers depend on the apps installed (files, notes, settings, comments, tags, and contacts,
  calendar, mail or talk when those apps are there); an unknown provider id is a 500 (29) or an
  error answer, so a caller that gets one reads the list to say which ids exist;
- each provider pages on its own with an opaque `cursor` (a number for files, null when done);
- the files provider matches names, not contents, unless a full-text search app is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.numbers import json_whole

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "MAX_LIMIT",
    "MAX_TERM",
    "Provider",
    "SearchHit",
    "SearchPage",
    "UnifiedSearchClient",
    "valid_provider_id",
]

MAX_TERM = 200
MAX_LIMIT = 50
MAX_CURSOR = 200
_PROVIDER_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_TEXT = 500  # cut titles and sublines from a provider to this many characters


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    app: str
    order: int
    filters: tuple[str, ...]


@dataclass(frozen=True)
class SearchHit:
    provider: str
    title: str
    subline: str
    url: str
    attributes: dict[str, str]


@dataclass(frozen=True)
class SearchPage:
    provider: str
    name: str
    hits: list[SearchHit]
    cursor: str | None  # pass back for the next page; None when the provider has no more


def valid_provider_id(provider: str) -> bool:
    return bool(_PROVIDER_ID.match(provider))


def _text(value: Any) -> str:
    return str(value or "")[:_TEXT]


class UnifiedSearchClient:
    def __init__(self, ocs: OCSClient, host: str) -> None:
        self._ocs = ocs
        self.host = host

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.ocs, nextcloud.http.host)

    async def providers(self) -> list[Provider]:
        data = await self._ocs.request("GET", "search/providers")
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the search providers are not a list")
        found = []
        for item in data[:200]:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            filters = item.get("filters")
            found.append(
                Provider(
                    id=item["id"],
                    name=_text(item.get("name") or item["id"]),
                    app=_text(item.get("appId")),
                    order=json_whole(item.get("order")) or 0,
                    filters=tuple(str(k) for k in filters) if isinstance(filters, dict) else ("term",),
                )
            )
        return sorted(found, key=lambda p: (p.order, p.id))

    async def search(
        self, provider: str, term: str, *, limit: int = 10, cursor: str | None = None
    ) -> SearchPage:
        """One page of one provider's results for `term`."""
        term = term.strip()
        if not term:
            raise InvalidInput("give a word to search for")
        if len(term) > MAX_TERM:
            raise InvalidInput(f"the search term is longer than {MAX_TERM} characters")
        if not _PROVIDER_ID.match(provider):
            raise InvalidInput(f"'{provider[:80]}' is not a search provider id")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
        if cursor is not None and len(cursor) > MAX_CURSOR:
            raise InvalidInput("that cursor is not one a provider gave")
        params: dict[str, Any] = {"term": term, "limit": limit}
        if cursor:
            params["cursor"] = cursor
        data = await self._ocs.request(
            "GET", f"search/providers/{quote(provider, safe='')}/search", params=params
        )
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise InvalidResponse(self.host, f"the search provider '{provider}' answered without entries")
        hits = [
            SearchHit(
                provider=provider,
                title=_text(entry.get("title")),
                subline=_text(entry.get("subline")),
                url=_text(entry.get("resourceUrl")),
                attributes={
                    str(k)[:64]: _text(v)
                    for k, v in (entry.get("attributes") or {}).items()
                    if isinstance(v, str | int | float)
                }
                if isinstance(entry.get("attributes"), dict)
                else {},
            )
            for entry in data["entries"][: limit * 2]
            if isinstance(entry, dict)
        ]
        more = data.get("cursor")
        next_cursor = None
        if more is not None and data.get("isPaginated") and len(hits) >= limit:
            next_cursor = str(more)[:MAX_CURSOR]
        return SearchPage(
            provider=provider, name=_text(data.get("name") or provider), hits=hits, cursor=next_cursor
        )
