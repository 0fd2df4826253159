"""Collectives as structure: a new collective, and a page moved or copied under another page of
its collective. Neither publishes nor destroys: a new collective has its creator alone, and a page
moved or copied within a collective is read by the same people (moving to another collective, whose
members differ, is not offered)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import COLLECTIVES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.collectives.client import Page, check_page_title
from nextcloud_mcp_server.toolsets.collectives.tools_common import CollectiveId, PageId, client_for, toolset

__all__ = ["CollectiveMade", "PageMoved", "nc_collectives_create_collective", "nc_collectives_move_page"]


class CollectiveMade(BaseModel):
    id: int
    name: str
    landing_page_id: int | None = Field(description="Its first page, under which new pages go")


class PageMoved(BaseModel):
    collective_id: int
    id: int = Field(description="The page's id (for a copy: the copy's)")
    title: str
    parent_id: int
    copied: bool
    notice: str | None = None


def _under(pages: list[Page], page_id: int) -> set[int]:
    """The page and every page below it."""
    found, frontier = {page_id}, [page_id]
    while frontier:
        current = frontier.pop()
        for page in pages:
            if page.parent_id == current and page.id not in found:
                found.add(page.id)
                frontier.append(page.id)
    return found


@toolset.tool(title="Create a collective")
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_create_collective(
    name: Annotated[str, Field(max_length=200)],
    ctx: Context[Any, Any],
    emoji: Annotated[str | None, Field(max_length=20)] = None,
) -> CollectiveMade:
    """Create a collective with you as its only member; it starts with a landing page."""
    name = check_page_title(name)
    client = await client_for(ctx)
    made = await client.create_collective(name, emoji.strip() if emoji and emoji.strip() else None)
    landing = [p.id for p in await client.pages(made.id) if p.parent_id == 0]
    return CollectiveMade(id=made.id, name=made.name, landing_page_id=landing[0] if landing else None)


@toolset.tool(title="Move or copy a page", idempotent=False)
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_move_page(
    collective_id: CollectiveId,
    page_id: PageId,
    parent_id: Annotated[PageId, Field(description="The page to put it under, in the same collective")],
    ctx: Context[Any, Any],
    copy: Annotated[bool, Field(description="Copy instead of moving")] = False,
    title: Annotated[str | None, Field(max_length=200, description="A new title")] = None,
) -> PageMoved:
    """Move or copy a page (with its subpages) under another page of its collective."""
    new_title = check_page_title(title) if title is not None else None
    client = await client_for(ctx)
    pages = await client.pages(collective_id)
    by_id = {p.id: p for p in pages}
    for wanted in (page_id, parent_id):
        if wanted not in by_id:
            raise InvalidInput(f"page {wanted} is not in collective {collective_id}")
    if by_id[page_id].parent_id == 0:
        raise InvalidInput("the landing page cannot be moved or copied; choose one of its subpages")
    if parent_id in _under(pages, page_id):
        raise InvalidInput(f"page {parent_id} is the page itself or below it; a page cannot go under itself")
    moved = await client.move_page(collective_id, page_id, parent_id=parent_id, title=new_title, copy=copy)
    notice = None
    if new_title is not None and moved.title != new_title:
        notice = f"Collectives stored the title as '{moved.title}', not '{new_title[:200]}'"
    return PageMoved(
        collective_id=collective_id,
        id=moved.id,
        title=moved.title,
        parent_id=moved.parent_id,
        copied=copy,
        notice=notice,
    )
