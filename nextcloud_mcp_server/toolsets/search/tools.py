"""Search toolset: Nextcloud's unified search, across whatever apps the server has."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import SEARCH_READ, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.search.client import (
    MAX_LIMIT,
    MAX_TERM,
    SearchPage,
    UnifiedSearchClient,
    valid_provider_id,
)
from nextcloud_mcp_server.toolsets.search.tools_indexed import indexed_results

__all__ = ["toolset"]

toolset = Toolset("search")

MAX_PROVIDERS = 20
# Not what people mean by "find everything about X": the admin settings pages and the app store.
_NOT_BY_DEFAULT = frozenset({"settings", "settings_apps"})


class ProviderInfo(BaseModel):
    id: str
    name: str
    app: str
    filters: list[str]


class ProviderList(BaseModel):
    providers: list[ProviderInfo]


class SearchResult(BaseModel):
    provider: str
    title: str
    subline: str = Field(description="Where or what it is, e.g. 'in Notes'")
    url: str = Field(description="The resource in Nextcloud's web interface")
    attributes: dict[str, str] = Field(description="Provider details, e.g. the file path for files")


class ProviderError(BaseModel):
    provider: str
    error: str


class SearchResults(BaseModel):
    term: str
    results: list[SearchResult]
    next_cursors: dict[str, str] = Field(
        description="Providers with more results: pass as `cursors` (same term) for the next page"
    )
    errors: list[ProviderError] = Field(default_factory=list)
    from_find_index: list[str] = Field(
        default_factory=list,
        description="Providers answered from your find index (words inside contents too), not by Nextcloud",
    )


async def _refuse_unknown(search: UnifiedSearchClient, wanted: list[str]) -> None:
    """Refuse the request if it names a provider Nextcloud does not have (nothing if all exist)."""
    known = {p.id for p in await search.providers()}
    unknown = [p for p in wanted if p not in known]
    if unknown:
        raise InvalidInput(
            f"no search provider {', '.join(repr(p[:64]) for p in unknown[:5])}; "
            f"the providers are: {', '.join(sorted(known))}"
        )


@toolset.tool(title="List search providers", read_only=True)
@require_scopes(SEARCH_READ)
async def nc_search_list_providers(ctx: Context[Any, Any]) -> ProviderList:
    """The places Nextcloud's unified search can look in (files, notes, and apps such as contacts,
    calendar, mail or talk when installed), with the filters each understands."""
    providers = await (await nextcloud_for(ctx)).api(UnifiedSearchClient).providers()
    return ProviderList(
        providers=[ProviderInfo(id=p.id, name=p.name, app=p.app, filters=list(p.filters)) for p in providers]
    )


@toolset.tool(title="Search Nextcloud", read_only=True)
@require_scopes(SEARCH_READ)
async def nc_search(
    term: Annotated[str, Field(min_length=1, max_length=MAX_TERM, description="Word(s) to look for")],
    ctx: Context[Any, Any],
    providers: Annotated[
        list[str] | None,
        Field(description="Provider ids from nc_search_list_providers (default: all but settings)"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Results per provider")] = 10,
    cursors: Annotated[
        dict[str, str] | None, Field(description="next_cursors of the previous page, for the next one")
    ] = None,
) -> SearchResults:
    """Search across Nextcloud with its unified search: each result names its provider, title,
    subline and URL (files carry their path in attributes), so you can follow up with the files,
    notes or calendar tools. Names are matched, not file contents, unless the server has a
    full-text search app. For the next page, call again with the same term and `cursors`."""
    nc = await nextcloud_for(ctx)
    search = nc.api(UnifiedSearchClient)
    if cursors:
        wanted = list(cursors)
    elif providers:
        wanted = list(dict.fromkeys(providers))
    else:
        wanted = [p for p in sorted({p.id for p in await search.providers()}) if p not in _NOT_BY_DEFAULT]
    if len(wanted) > MAX_PROVIDERS:
        raise InvalidInput(f"ask at most {MAX_PROVIDERS} providers at a time")
    if any(not valid_provider_id(p) for p in wanted):
        await _refuse_unknown(search, wanted)
    indexed = None if cursors else await indexed_results(ctx, nc, term, wanted, limit)
    if indexed is not None:
        wanted = [p for p in wanted if p not in indexed[1]]

    async def one(provider: str) -> SearchPage | ProviderError:
        try:
            return await search.search(provider, term, limit=limit, cursor=(cursors or {}).get(provider))
        except NextcloudError as exc:
            return ProviderError(provider=provider, error=exc.message)

    pages = await asyncio.gather(*(one(p) for p in wanted))
    if any(isinstance(page, ProviderError) for page in pages) and (cursors or providers):
        # Named providers are asked without listing them first (one request less); an unknown id
        # is refused by Nextcloud, and only then is the list read to say which ids exist.
        await _refuse_unknown(search, wanted)
    results = [SearchResult(**found) for found in indexed[0]] if indexed else []
    next_cursors: dict[str, str] = {}
    errors: list[ProviderError] = []
    for page in pages:
        if isinstance(page, ProviderError):
            errors.append(page)
            continue
        results += [
            SearchResult(
                provider=h.provider, title=h.title, subline=h.subline, url=h.url, attributes=h.attributes
            )
            for h in page.hits
        ]
        if page.cursor is not None:
            next_cursors[page.provider] = page.cursor
    if errors and len(errors) == len(pages) and not indexed:
        raise NextcloudError(search.host, "; ".join(f"{e.provider}: {e.error}" for e in errors))
    covered = indexed[1] if indexed else []
    return SearchResults(
        term=term, results=results, next_cursors=next_cursors, errors=errors, from_find_index=covered
    )
