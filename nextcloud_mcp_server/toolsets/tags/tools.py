"""Tags toolset: Nextcloud's collaborative (system) tags on files and folders (app systemtags), and
favorites (the star in Files)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import Forbidden, NotFound
from nextcloud_mcp_server.tools._audience import Audience, approve_publication
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_target import FilePath, iso, resolve
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.tags.client import MAX_NAME, SystemTag, SystemTagsClient
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("tags")

TagName = Annotated[str, Field(min_length=1, max_length=MAX_NAME, description="The tag's name")]


class TagInfo(BaseModel):
    id: int
    name: str
    assignable: bool = Field(description="Whether you may add it to or remove it from files")


class TagList(BaseModel):
    path: str | None = Field(default=None, description="Set when these are the tags of one file")
    tags: list[TagInfo]
    total: int = Field(description="Tags before limit/offset")


class TagChange(BaseModel):
    path: str
    tag: str
    tag_id: int
    changed: bool = Field(description="False when the file already was as asked")
    created_tag: bool = False


class TaggedFile(BaseModel):
    path: str
    type: Literal["file", "directory"]
    size: int | None = None
    modified: str | None = None


class TaggedFiles(BaseModel):
    tag: str
    files: list[TaggedFile]
    next_offset: int | None = Field(description="Where the next page starts; null at the end")


def _info(tag: SystemTag) -> TagInfo:
    return TagInfo(id=tag.id, name=tag.name, assignable=tag.user_assignable and tag.can_assign)


async def _existing(tags: SystemTagsClient, name: str, *, creating: bool = False) -> SystemTag:
    """The tag named `name`; `creating` when the tool could create it (nc_tags_assign), so that
    the refusal names the argument that does."""
    tag = await tags.find(name)
    if tag is None:
        create = "; to create it, call again with create=true" if creating else ""
        raise NotFound(
            tags.host,
            f"there is no tag named '{name[:MAX_NAME]}' (list them with nc_tags_list){create}",
            status=404,
        )
    return tag


@toolset.tool(title="List tags", read_only=True)
@require_scopes(FILES_READ)
async def nc_tags_list(
    ctx: Context[Any, Any],
    path: Annotated[
        str | None, Field(max_length=4096, description="Only the tags of this file or folder")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 100,
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
) -> TagList:
    """List the tags you can see, by name; with path, the tags of that file or folder."""
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    shown = None
    if path is None:
        found = await tags.list_tags()
    else:
        _, entry, file_id = await resolve(ctx, path)
        found, shown = await tags.tags_of(file_id), paths.display(entry.path)
    page = [_info(t) for t in found[offset : offset + limit]]
    return TagList(path=shown, tags=page, total=len(found))


_EVERYONE = Audience(
    "the tag list of this Nextcloud", open_to=("every user of this Nextcloud (tag names are shared by all)",)
)


async def _everyone() -> Audience:
    return _EVERYONE


@toolset.tool(title="Tag a file", idempotent=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
async def nc_tags_assign(
    path: FilePath,
    tag: TagName,
    ctx: Context[Any, Any],
    create: Annotated[bool, Field(description="Create the tag when no tag has this name")] = False,
) -> TagChange:
    """Add a tag to a file or folder. A missing tag is created only with create=true, and then the
    user is asked first: every user of the Nextcloud sees a tag's name."""
    _, entry, file_id = await resolve(ctx, path)
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    found, created = await tags.find(tag), False
    if found is None:
        if not create:
            await _existing(tags, tag, creating=True)
        # a new tag's name is seen by every user of the instance: published, so asked (ADR 0058)
        await approve_publication(
            ctx, tool="nc_tags_assign", audience=_EVERYONE, text=tag, action="Create a tag", again=_everyone
        )
        found, created = await tags.create(tag), True
    changed = await tags.assign(file_id, found.id)
    return TagChange(
        path=paths.display(entry.path), tag=found.name, tag_id=found.id, changed=changed, created_tag=created
    )


@toolset.tool(title="Untag a file", idempotent=True)
@require_scopes(FILES_WRITE)
async def nc_tags_unassign(path: FilePath, tag: TagName, ctx: Context[Any, Any]) -> TagChange:
    """Remove a tag from a file or folder. The tag itself stays, and other files keep it."""
    _, entry, file_id = await resolve(ctx, path)
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    found = await _existing(tags, tag)
    await tags.unassign(file_id, found.id)
    return TagChange(path=paths.display(entry.path), tag=found.name, tag_id=found.id, changed=True)


@toolset.tool(title="Find files by tag", read_only=True)
@require_scopes(FILES_READ)
async def nc_tags_find_files(
    tag: TagName,
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0,
) -> TaggedFiles:
    """Find your files and folders that carry a tag (by its name), in pages."""
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    found = await _existing(tags, tag)
    entries = await tags.files_with(found.id, limit=limit + 1, offset=offset)
    files = [
        TaggedFile(path=paths.display(e.path), type=e.kind, size=e.size, modified=iso(e.modified))
        for e in entries[:limit]
    ]
    return TaggedFiles(
        tag=found.name, files=files, next_offset=offset + limit if len(entries) > limit else None
    )


class Favorite(BaseModel):
    path: str
    favorite: bool = Field(description="As Nextcloud reads it after the change")


@toolset.tool(title="Mark a favorite", idempotent=True)
@require_scopes(FILES_WRITE)
async def nc_tags_favorite(
    path: FilePath,
    ctx: Context[Any, Any],
    favorite: Annotated[bool, Field(description="false removes the mark")] = True,
) -> Favorite:
    """Mark a file or folder as a favorite (the star in Files), or remove the mark."""
    _, entry, _ = await resolve(ctx, path)
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    now = await tags.set_favorite(entry.path, on=favorite)
    if now != favorite:
        raise Forbidden(
            tags.host,
            f"Nextcloud did not change the favorite mark of {paths.display(entry.path)}",
            status=403,
        )
    return Favorite(path=paths.display(entry.path), favorite=now)


@toolset.tool(title="List favorites", read_only=True)
@require_scopes(FILES_READ)
async def nc_tags_list_favorites(
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0,
) -> TaggedFiles:
    """Your favorite files and folders (starred in Files), in pages."""
    tags = await (await nextcloud_for(ctx)).dav_api(SystemTagsClient)
    entries = await tags.favorites(limit=limit + 1, offset=offset)
    files = [
        TaggedFile(path=paths.display(e.path), type=e.kind, size=e.size, modified=iso(e.modified))
        for e in entries[:limit]
    ]
    return TaggedFiles(
        tag="favorites", files=files, next_offset=offset + limit if len(entries) > limit else None
    )
