"""Collectives as structure: a new collective, a page moved or copied under another page of its
collective, and a page put in the collective's trash and restored from it. Creating, moving and
copying neither publish nor destroy: a new collective has its creator alone, and a page moved or
copied within a collective is read by the same people (moving to another collective, whose members
differ, is not offered). Trashing takes the page from every member, so it asks first, bound to
the page and its subpages as read."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import COLLECTIVES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.toolsets.collectives.client import Page, check_page_title
from nextcloud_mcp_server.toolsets.collectives.tools_common import CollectiveId, PageId, client_for, toolset
from nextcloud_mcp_server.views import APPROVAL

__all__ = [
    "CollectiveMade",
    "PageMoved",
    "nc_collectives_create_collective",
    "nc_collectives_move_page",
    "nc_collectives_restore_page",
    "nc_collectives_trash_page",
]


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


class PageTrashed(BaseModel):
    collective_id: int
    id: int
    title: str
    subpages: int
    trashed: bool = Field(description="True: in the trash; false: restored")


def _subtree(pages: list[Page], page_id: int) -> list[Page]:
    below = _under(pages, page_id)
    return sorted((p for p in pages if p.id in below), key=lambda p: p.id)


def _bound(subtree: list[Page]) -> str:
    """What the question is bound to: every page of the subtree as read (its title, place, size
    and last change), so a page edited, renamed, moved or added below while asked voids it."""
    return "|".join(f"{p.id}:{p.parent_id}:{p.timestamp}:{p.size}:{p.title}" for p in subtree)


@toolset.tool(title="Trash a page", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_trash_page(
    collective_id: CollectiveId, page_id: PageId, ctx: Context[Any, Any]
) -> PageTrashed:
    """Move a page and its subpages to the collective's trash (restorable). The user is asked first."""
    client = await client_for(ctx)
    pages = await client.pages(collective_id)
    page = next((p for p in pages if p.id == page_id), None)
    if page is None:
        raise InvalidInput(f"page {page_id} is not in collective {collective_id}")
    if page.parent_id == 0:
        raise InvalidInput("the landing page cannot be trashed; it is the collective itself")
    subtree = _subtree(pages, page_id)
    below = len(subtree) - 1
    target = f'the page "{page.title[:100]}"'
    with_below = f" and its {below} subpages" if below else ""
    question = (
        f"Move {target}{with_below} to the trash of collective {collective_id}? "
        "Every member loses it until it is restored."
    )
    tool, version = "nc_collectives_trash_page", _bound(subtree)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if asked and _bound(_subtree(await client.pages(collective_id), page_id)) != version:
        await refuse_changed(ctx, tool=tool, target=target)
    await client.trash_page(collective_id, page_id)
    return PageTrashed(
        collective_id=collective_id, id=page.id, title=page.title, subpages=below, trashed=True
    )


@toolset.tool(title="Restore a page", idempotent=True)
@require_scopes(COLLECTIVES_WRITE)
async def nc_collectives_restore_page(
    collective_id: CollectiveId,
    ctx: Context[Any, Any],
    page_id: Annotated[int | None, Field(ge=1, description="A trashed page; omit to list the trash")] = None,
) -> list[PageTrashed]:
    """List the collective's trashed pages, or restore one (with its subpages) where it was."""
    client = await client_for(ctx)
    trashed = await client.trashed_pages(collective_id)
    if page_id is None:
        return [
            PageTrashed(collective_id=collective_id, id=p.id, title=p.title, subpages=0, trashed=True)
            for p in trashed[:200]
        ]
    if page_id not in {p.id for p in trashed}:
        listed = ", ".join(f"{p.id} ({p.title[:40]})" for p in trashed[:20]) or "none"
        raise InvalidInput(
            f"page {page_id} is not in the trash of collective {collective_id}; trashed: {listed}"
        )
    page = await client.restore_page(collective_id, page_id)
    return [PageTrashed(collective_id=collective_id, id=page.id, title=page.title, subpages=0, trashed=False)]
