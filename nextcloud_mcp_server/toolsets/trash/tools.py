"""Trash toolset: the Files trash bin (app files_trashbin). Restoring never overwrites; emptying
asks the human first."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import Conflict
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_approval import human_size, stat_or_none
from nextcloud_mcp_server.tools._file_target import iso
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.trash.client import TrashClient, TrashItem
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("trash")

ItemName = Annotated[
    str, Field(min_length=1, max_length=1024, description="The item's name as nc_trash_list gives it")
]


class TrashEntry(BaseModel):
    name: str = Field(description="Pass this to nc_trash_restore")
    original_path: str
    type: Literal["file", "directory"]
    size: int | None = None
    deleted: str | None = Field(description="When, ISO 8601 UTC")
    deleted_by: str | None = None


class TrashListing(BaseModel):
    items: list[TrashEntry]
    total: int = Field(description="Items in the trash before limit/offset")
    total_size: int = Field(description="Bytes in the trash")


class RestoredItem(BaseModel):
    name: str
    path: str = Field(description="Where it is now")


class EmptiedTrash(BaseModel):
    deleted: int = Field(description="Items permanently deleted")


def _entry(item: TrashItem) -> TrashEntry:
    return TrashEntry(
        name=item.name,
        original_path=paths.display(item.original_location),
        type="directory" if item.kind == "directory" else "file",
        size=item.size,
        deleted=iso(item.deleted_at),
        deleted_by=item.deleted_by,
    )


@toolset.tool(title="List the trash", read_only=True)
@require_scopes(FILES_READ)
async def nc_trash_list(
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0,
) -> TrashListing:
    """List deleted files and folders, newest deletion first, with where each was."""
    trash = await (await nextcloud_for(ctx)).dav_api(TrashClient)
    page = await trash.list_items(limit=limit, offset=offset)
    return TrashListing(items=[_entry(i) for i in page.items], total=page.total, total_size=page.total_size)


@toolset.tool(title="Restore from the trash")
@require_scopes(FILES_WRITE)
async def nc_trash_restore(name: ItemName, ctx: Context[Any, Any]) -> RestoredItem:
    """Restore a deleted item to where it was (into the root folder if that folder is gone).
    Refused when something already exists there: nothing is overwritten."""
    nc = await nextcloud_for(ctx)
    trash, files = await nc.dav_api(TrashClient), await nc.files()
    item = await trash.find(name)
    target = item.original_location or item.file_name
    folder = paths.parent(target)
    if folder:
        parent = await stat_or_none(files, folder)
        if parent is None or parent.kind != "directory":
            target = item.file_name  # Nextcloud restores into the root folder then
    if await stat_or_none(files, target) is not None:
        raise Conflict(
            trash.host,
            f"{paths.display(target)} already exists; move or rename it first, then restore "
            "(nothing was changed)",
            status=409,
        )
    await trash.restore(item.name)
    return RestoredItem(name=item.name, path=paths.display(target))


@toolset.tool(title="Empty the trash", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
async def nc_trash_empty(ctx: Context[Any, Any]) -> EmptiedTrash:
    """Permanently delete everything in the trash. The user is asked to approve first (unless the
    server is set up not to ask)."""
    tool = "nc_trash_empty"
    trash = await (await nextcloud_for(ctx)).dav_api(TrashClient)
    page = await trash.list_items(limit=3)
    if not page.total:
        return EmptiedTrash(deleted=0)
    shown = (page.total, page.total_size, page.items[0].name)
    examples = ", ".join(paths.display(i.original_location) for i in page.items)
    more = f" and {page.total - len(page.items)} more" if page.total > len(page.items) else ""
    question = (
        f"Permanently delete all {page.total} item(s) in your trash ({human_size(page.total_size)}): "
        f"{examples}{more}? This cannot be undone."
    )
    version = ":".join(str(part) for part in shown)
    if await require_approval(ctx, tool=tool, target="the trash", question=question, version=version):
        now = await trash.list_items(limit=1)
        if (now.total, now.total_size, now.items[0].name if now.items else "") != shown:
            await refuse_changed(ctx, tool=tool, target="the trash")
    await trash.empty()
    return EmptiedTrash(deleted=page.total)
