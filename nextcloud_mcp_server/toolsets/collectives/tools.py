"""Collectives toolset: collectives and their pages (Collectives 3.0 or later, so Nextcloud 30 or
later; on Nextcloud 29 every tool says Collectives is too old). Pages are Markdown; an edit is
bound to the page file's ETag, and emptying a page or cutting it to less than half asks first."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import COLLECTIVES_READ, COLLECTIVES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse, NotFound, PreconditionFailed
from nextcloud_mcp_server.nextcloud.folding import fold
from nextcloud_mcp_server.tools._approval import shrinks
from nextcloud_mcp_server.tools._find_index import ANSWERED_FROM_INDEX as INDEX
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._shown import bound_version
from nextcloud_mcp_server.tools._versions import approve_update, given_etag
from nextcloud_mcp_server.toolsets.collectives import tools_structure
from nextcloud_mcp_server.toolsets.collectives.client import (
    CollectivesClient,
    Page,
    PageText,
    check_page_title,
)
from nextcloud_mcp_server.toolsets.collectives.tools_common import (
    CollectiveId,
    PageId,
    client_for,
    keeps_most,
    toolset,
)
from nextcloud_mcp_server.toolsets.collectives.tools_indexed import indexed_pages
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["tools_structure", "toolset"]

READ_BYTES = 200_000  # of a page's Markdown returned by get_page; longer pages are cut
WRITE_BYTES = 1_000_000  # of Markdown accepted by create and edit
SCAN_PAGES = 200  # pages whose text one search reads, newest first
SCAN_BYTES = 64_000  # of each page's text a search reads
MAX_QUERY = 200
MAX_COLLECTIVES = 20  # searched when no collective is named
SNIPPET = 160


class CollectiveSummary(BaseModel):
    id: int
    name: str
    can_edit: bool


class CollectiveList(BaseModel):
    collectives: list[CollectiveSummary]
    total: int


class PageSummary(BaseModel):
    id: int
    title: str
    parent_id: int = Field(description="0 for the landing page")
    depth: int = Field(description="0 for the landing page, 1 for its subpages, ...")
    modified: str = Field(description="Last change, ISO 8601 UTC")


class PageList(BaseModel):
    collective_id: int
    pages: list[PageSummary] = Field(description="In tree order: each page before its subpages")
    total: int = Field(description="Pages in the listed tree before limit/offset")


class PageDetail(BaseModel):
    collective_id: int
    id: int
    title: str
    parent_id: int
    modified: str
    content: str = Field(description="Markdown")
    truncated: bool = Field(description=f"True when the page is longer than the {READ_BYTES} bytes returned")
    size: int = Field(description="Bytes of the whole page")
    etag: str = Field(description="Pass this to nc_collectives_edit_page")
    notice: str | None = None


class PageHit(BaseModel):
    collective_id: int
    id: int
    title: str
    matched_in: str = Field(description="'title' or 'content'")
    snippet: str


class PageSearchResult(BaseModel):
    hits: list[PageHit]
    searched_pages: int
    read_pages: int = Field(description="Pages whose text was read; the others were matched by title only")
    complete: bool = Field(description="False when some pages were matched by title only")
    answered_from: str = Field(
        default="nextcloud", description="'nextcloud', or 'find index' (your find index)"
    )


def _iso(timestamp: int) -> str:
    seconds = min(max(timestamp, 0), 253402300799)  # years 1970-9999
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


_client = client_for


def _tree(pages: list[Page], under: int | None) -> list[tuple[Page, int]]:
    """Pages in tree order with their depth: the landing page (or `under`) first, each page before
    its subpages, siblings in the collective's order, then by title. Pages that hang from no
    listed page (a malformed answer) and cycles are left out."""
    children: dict[int, list[Page]] = {}
    for page in pages:
        children.setdefault(page.parent_id, []).append(page)
    by_id = {page.id: page for page in pages}
    for parent_id, kids in children.items():
        order = by_id[parent_id].subpage_order if parent_id in by_id else []
        rank = {page_id: i for i, page_id in enumerate(order)}
        kids.sort(key=lambda p: (rank.get(p.id, len(rank)), fold(p.title), p.id))
    if under is None:
        roots = children.get(0, [])
    elif under in by_id:
        roots = [by_id[under]]
    else:
        raise InvalidInput(f"page {under} is not in this collective")
    ordered: list[tuple[Page, int]] = []
    seen: set[int] = set()
    stack = [(page, 0) for page in reversed(roots)]
    while stack:
        page, depth = stack.pop()
        if page.id in seen:
            continue
        seen.add(page.id)
        ordered.append((page, depth))
        stack.extend((kid, depth + 1) for kid in reversed(children.get(page.id, [])))
    return ordered


def _detail(collective_id: int, page: Page, text: PageText, notice: str | None = None) -> PageDetail:
    return PageDetail(
        collective_id=collective_id,
        id=page.id,
        title=page.title,
        parent_id=page.parent_id,
        modified=_iso(page.timestamp),
        content=text.text,
        truncated=text.truncated,
        size=text.size,
        etag=text.etag,
        notice=notice,
    )


def _characters(count: int) -> str:
    return f"{count} character{'' if count == 1 else 's'}"


def _markdown(content: str) -> str:
    size = len(content.encode("utf-8"))
    if size > WRITE_BYTES:
        raise InvalidInput(f"content is {size} bytes, over the limit of {WRITE_BYTES}")
    return content


@toolset.tool(title="List collectives", read_only=True)
@require_scopes(COLLECTIVES_READ)
async def nc_collectives_list_collectives(
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> CollectiveList:
    """List the collectives (team wikis) you are a member of: id, name, whether you may edit."""
    found = await (await _client(ctx)).collectives()
    found.sort(key=lambda c: (fold(c.name), c.id))
    shown = [
        CollectiveSummary(id=c.id, name=c.name, can_edit=c.can_edit) for c in found[offset : offset + limit]
    ]
    return CollectiveList(collectives=shown, total=len(found))


@toolset.tool(title="List pages of a collective", read_only=True)
@require_scopes(COLLECTIVES_READ)
async def nc_collectives_list_pages(
    collective_id: CollectiveId,
    ctx: Context[Any, Any],
    under: Annotated[int | None, Field(ge=1, description="Only this page and its subpages")] = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 100,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> PageList:
    """List a collective's pages as a tree (depth and parent), without their text."""
    pages = _tree(await (await _client(ctx)).pages(collective_id), under)
    shown = [
        PageSummary(id=p.id, title=p.title, parent_id=p.parent_id, depth=depth, modified=_iso(p.timestamp))
        for p, depth in pages[offset : offset + limit]
    ]
    return PageList(collective_id=collective_id, pages=shown, total=len(pages))


@toolset.tool(title="Read a page", read_only=True)
@require_scopes(COLLECTIVES_READ)
async def nc_collectives_get_page(
    collective_id: CollectiveId, page_id: PageId, ctx: Context[Any, Any]
) -> PageDetail:
    """Read a page's Markdown (the first 200,000 bytes; `truncated` says when there is more) and
    its etag, needed to edit it."""
    client = await _client(ctx)
    page = await client.page(collective_id, page_id)
    return _detail(collective_id, page, await client.read(page, max_bytes=READ_BYTES))


@toolset.tool(title="Create a page")
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_create_page(
    collective_id: CollectiveId,
    title: str,
    ctx: Context[Any, Any],
    parent_id: Annotated[
        int | None, Field(ge=1, description="The parent page; default: the landing page")
    ] = None,
    content: Annotated[str, Field(description="Markdown")] = "",
) -> PageDetail:
    """Create a page under a parent page. Collectives may adjust the title (e.g. '/' or a taken title)."""
    title, content = check_page_title(title), _markdown(content)
    client = await _client(ctx)
    if parent_id is None:
        landing = [p for p in await client.pages(collective_id) if p.parent_id == 0]
        if not landing:
            raise NotFound(client.host, f"collective {collective_id} has no landing page", status=404)
        parent_id = landing[0].id
    page = await client.create_page(collective_id, parent_id, title)
    if content and page.timestamp:
        # unless changed after the second it was made (the answer has no ETag; the PUT's has)
        etag = await client.write_new(page, content)
        text = await client.read(page, max_bytes=READ_BYTES) if not etag else _written(content, etag)
    else:
        text = await client.read(page, max_bytes=READ_BYTES)  # its ETag, for the next edit
        if content:
            etag = await client.write(page, content, if_match=text.etag)
            text = await client.read(page, max_bytes=READ_BYTES) if not etag else _written(content, etag)
    notice = None
    if page.title != title:
        notice = f"Collectives stored the title as '{page.title}', not '{title[:200]}'"
    return _detail(collective_id, page, text, notice)


def _written(content: str, etag: str) -> PageText:
    raw = content.encode("utf-8")
    cut = raw[:READ_BYTES].decode("utf-8", "ignore")
    return PageText(text=cut, etag=etag, size=len(raw), truncated=len(raw) > READ_BYTES)


@toolset.tool(title="Edit a page", idempotent=True, view=APPROVAL)
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_edit_page(
    collective_id: CollectiveId,
    page_id: PageId,
    etag: Annotated[str, Field(description="From nc_collectives_get_page; a stale one is refused")],
    content: Annotated[str, Field(description="The new full Markdown (replaces the old)")],
    ctx: Context[Any, Any],
) -> Annotated[CallToolResult, PageDetail]:
    """Replace a page's Markdown. If the page changed since its etag was read, nothing is written
    and the current page is returned to merge and retry. Emptying it or cutting it to less than
    half asks the user first."""
    etag, content = given_etag(etag), _markdown(content)
    client = await _client(ctx)
    page = await client.page(collective_id, page_id)
    target = f'the page "{page.title}"'
    if keeps_most(page.size, content):
        # nothing to ask, so no read first: Nextcloud refuses the model's etag if the page changed
        try:
            new_etag = await client.write(page, content, if_match=etag)
        except PreconditionFailed:
            now = await client.read(page, max_bytes=READ_BYTES)
            said = f"{target} changed since that etag was read (now {now.etag}); nothing was overwritten"
            return stale_version(ValueError(said), "page", "current_page", _detail(collective_id, page, now))
        if not new_etag:
            return answer(_detail(collective_id, page, await client.read(page, max_bytes=READ_BYTES)))
        return answer(_detail(collective_id, page, _written(content, new_etag)))
    current = await client.read(page, max_bytes=WRITE_BYTES)
    question = None
    # compared with the whole page (ADR 0057): a page longer than was read is compared by its
    # size in bytes, never by the part that was read
    if current.truncated:
        removes = not content.strip() or len(content.encode("utf-8")) < current.size // 2
    else:
        removes = shrinks(current.text, content)
    if removes:
        left = _characters(len(content)) if content.strip() else "nothing"
        was = _characters(len(current.text)) if not current.truncated else f"{current.size:,} bytes"
        question = f"Replace the text of {target} ({was}) with {left}?"
    try:
        version = await approve_update(
            ctx,
            tool="nc_collectives_edit_page",
            target=target,
            host=client.host,
            given=etag,
            current=current.etag,
            question=question,
        )

        async def send(if_match: str) -> str:
            # bound to what was read, not the ETag alone (ADR 0057, 0059): a page rewritten with the
            # same size and time while the human was asked keeps its ETag
            shown = bound_version(current.etag, current.text, current.size)
            if version.asked:
                now = await client.read(page, max_bytes=WRITE_BYTES)
                if bound_version(now.etag, now.text, now.size) != shown:
                    raise PreconditionFailed(
                        client.host, f"{target} changed while you were asked", status=412
                    )
            return await client.write(page, content, if_match=if_match)

        new_etag = await version.write(ctx, send)
    except PreconditionFailed as changed:
        now = await client.read(page, max_bytes=READ_BYTES)
        return stale_version(changed, "page", "current_page", _detail(collective_id, page, now))
    if not new_etag:
        return answer(_detail(collective_id, page, await client.read(page, max_bytes=READ_BYTES)))
    return answer(_detail(collective_id, page, _written(content, new_etag)))


@toolset.tool(title="Search pages", read_only=True)
@require_scopes(COLLECTIVES_READ)
async def nc_collectives_search_pages(
    query: Annotated[
        str, Field(min_length=1, max_length=MAX_QUERY, description="Words that must all appear")
    ],
    ctx: Context[Any, Any],
    collective_id: Annotated[int | None, Field(ge=1, description="Only this collective")] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> PageSearchResult:
    """Find pages whose title or text has every word (case- and accent-insensitive). Matches by
    reading pages itself, the newest first; very large collectives are matched partly by title."""
    words = fold(query).split()
    if not words:
        raise InvalidInput("query must contain a word")
    indexed = await indexed_pages(ctx, query, collective_id, limit)
    if indexed is not None:
        hits, n = [PageHit(**found) for found in indexed], len(indexed)
        return PageSearchResult(hits=hits, searched_pages=n, read_pages=n, complete=True, answered_from=INDEX)
    client = await _client(ctx)
    ids = [collective_id] if collective_id else [c.id for c in await client.collectives()][:MAX_COLLECTIVES]
    pages = [(cid, page) for cid in ids for page in await client.pages(cid)]
    pages.sort(key=lambda item: (-item[1].timestamp, item[1].id))
    texts = await _read_some(client, [page for _, page in pages[:SCAN_PAGES]])
    title_hits: list[PageHit] = []
    text_hits: list[PageHit] = []
    for cid, page in pages:
        title = fold(page.title)
        text = texts.get(page.id, "")
        folded = fold(text)
        if not all(w in title or w in folded for w in words):
            continue
        in_title = all(w in title for w in words)
        snippet = _snippet(text, folded, words)
        hit = PageHit(
            collective_id=cid,
            id=page.id,
            title=page.title,
            matched_in="title" if in_title else "content",
            snippet=snippet,
        )
        (title_hits if in_title else text_hits).append(hit)
    read = len(texts)
    return PageSearchResult(
        hits=(title_hits + text_hits)[:limit],
        searched_pages=len(pages),
        read_pages=read,
        complete=read >= len(pages),
    )


async def _read_some(client: CollectivesClient, pages: list[Page]) -> dict[int, str]:
    """The start of each page's text, four at a time."""
    gate = asyncio.Semaphore(4)

    async def one(page: Page) -> tuple[int, str]:
        async with gate:
            try:
                return page.id, (await client.read(page, max_bytes=SCAN_BYTES)).text
            except (NotFound, InvalidResponse):  # trashed or moved since listed; a file it cannot read
                return page.id, ""

    return dict(await asyncio.gather(*(one(page) for page in pages)))


def _snippet(text: str, folded: str, words: list[str]) -> str:
    # `fold` can change lengths (accents, ligatures): positions are close, which a snippet allows
    positions = [p for w in words if (p := folded.find(w)) >= 0]
    start = max(0, min(positions) - SNIPPET // 4) if positions else 0
    excerpt = text[start : start + SNIPPET].replace("\n", " ").strip()
    return ("…" if start > 0 else "") + excerpt + ("…" if start + SNIPPET < len(text) else "")
