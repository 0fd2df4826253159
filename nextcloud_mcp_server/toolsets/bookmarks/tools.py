"""Bookmarks toolset: the Bookmarks app's bookmarks, tags and folders. Only http and https links
are stored (never fetched by this server); adding a link that is already bookmarked is refused
(the app would overwrite that bookmark); deleting asks, bound to what was shown."""

from __future__ import annotations

import time
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._shown import bound_version, shown_text
from nextcloud_mcp_server.toolsets.bookmarks import DECLARATION
from nextcloud_mcp_server.toolsets.bookmarks.client import ROOT, Bookmark, BookmarksClient, Folder
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("bookmarks")

BookmarkId = Annotated[int, Field(ge=1, le=2**53, description="The bookmark's id, as listed")]
FolderId = Annotated[int | None, Field(ge=-1, le=2**53, description="A folder's id (-1: the top level)")]
Url = Annotated[str, Field(min_length=8, max_length=4_000, description="An https:// or http:// link")]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=50)]
MAX_DESCRIPTION = 2_000  # characters of a description shown in a listing
MAX_FOLDERS = 500


class BookmarkOut(BaseModel):
    id: int
    url: str
    title: str
    description: str
    tags: list[str]
    folders: list[int] = Field(description="Folder ids; -1 is the top level")
    modified: str = Field(description="Last change, ISO 8601 UTC")
    version: str = Field(description="Pass to nc_bookmarks_update_bookmark")


class BookmarkList(BaseModel):
    bookmarks: list[BookmarkOut]
    next_page: int | None = Field(default=None, description="Pass as page for more")


class FolderOut(BaseModel):
    id: int
    path: str = Field(description="Its titles from the top level, joined by /")


class FoldersAndTags(BaseModel):
    folders: list[FolderOut]
    tags: list[str]
    cut: bool = Field(description=f"True when there are more than {MAX_FOLDERS} folders or tags")


class DeletedBookmark(BaseModel):
    id: int
    url: str


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(max(seconds, 0), 253402300799)))


def _version(bookmark: Bookmark) -> str:
    # The app's list splits a tag at its commas ("a,b" is "a" and "b" there), its single read
    # does not: the tags are digested as the list gives them, or no listed version ever matched.
    tags = sorted(tag for joined in bookmark.tags for tag in joined.split(","))
    return bound_version(str(bookmark.lastmodified), bookmark.model_copy(update={"tags": tags}))


def _out(bookmark: Bookmark) -> BookmarkOut:
    return BookmarkOut(
        id=bookmark.id,
        url=(bookmark.target or bookmark.url)[:4_000],
        title=bookmark.title[:500],
        description=bookmark.description[:MAX_DESCRIPTION],
        tags=[tag[:100] for tag in bookmark.tags[:50]],
        folders=bookmark.folders[:50],
        modified=_iso(bookmark.lastmodified),
        version=_version(bookmark),
    )


def checked_url(url: str) -> str:
    """An http(s) link with a host and no spaces or hidden characters; anything else is refused."""
    url = url.strip()
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest or rest.startswith("/"):
        raise InvalidInput("a bookmark's url must be an https:// or http:// link with a host")
    if any(c.isspace() for c in url):
        raise InvalidInput("a bookmark's url must not contain spaces (encode them as %20)")
    check_visible(url, "the url")
    return url


_PATH = 1_000  # characters of a folder's path shown


def _tags(tags: list[str]) -> list[str]:
    for tag in tags:
        check_visible(tag, "a tag")
    return list(dict.fromkeys(tag.strip() for tag in tags if tag.strip()))


def _paths(folders: list[Folder]) -> list[FolderOut]:
    """Each folder by its path, depth first, at most MAX_FOLDERS. Paths are cut as they are made,
    and only children that will be shown are stacked: a 200 KB title above 3,000 children held
    600 MB of uncut paths."""
    out: list[FolderOut] = []
    stack = [(folder, folder.title[:_PATH]) for folder in reversed(folders[:MAX_FOLDERS])]
    while stack and len(out) < MAX_FOLDERS:
        folder, path = stack.pop()
        out.append(FolderOut(id=folder.id, path=path))
        room = MAX_FOLDERS - len(out) - len(stack)
        children = folder.children[: max(room, 0)]
        stack.extend((child, f"{path}/{child.title[:_PATH]}"[:_PATH]) for child in reversed(children))
    return out


@toolset.tool(title="Find bookmarks", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_bookmarks_list_bookmarks(
    ctx: Context[Any, Any],
    words: Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=10)]
    | None = None,
    tags: Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=10)]
    | None = None,
    folder_id: FolderId = None,
    page: Annotated[int, Field(ge=0, le=10_000)] = 0,
    limit: Annotated[int, Field(ge=1, le=100)] = 30,
) -> BookmarkList:
    """Your bookmarks, newest first: all, or those with every word (in title, link, description),
    every tag, in a folder."""
    nc = await nextcloud_for(ctx)
    found = await nc.api(BookmarksClient).bookmarks(
        words=words or [], tags=tags or [], folder=folder_id, url=None, page=page, limit=limit + 1
    )
    return BookmarkList(
        bookmarks=[_out(b) for b in found[:limit]], next_page=page + 1 if len(found) > limit else None
    )


@toolset.tool(title="List bookmark folders and tags", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_bookmarks_list_folders(ctx: Context[Any, Any]) -> FoldersAndTags:
    """Your bookmark folders (with their paths) and every tag in use."""
    nc = await nextcloud_for(ctx)
    client = nc.api(BookmarksClient)
    folders, tags = _paths(await client.folders()), await client.tags()
    cut = len(folders) >= MAX_FOLDERS or len(tags) > MAX_FOLDERS
    return FoldersAndTags(folders=folders, tags=[t[:100] for t in tags[:MAX_FOLDERS]], cut=cut)


@toolset.tool(title="Add a bookmark")
@require_scopes(DECLARATION.write)
async def nc_bookmarks_add_bookmark(
    url: Url,
    ctx: Context[Any, Any],
    title: Annotated[str, Field(max_length=500)] = "",
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION)] = "",
    tags: Tags | None = None,
    folder_id: FolderId = None,
) -> BookmarkOut:
    """Bookmark a link, with tags and in a folder (the top level if none). A link already
    bookmarked is refused, naming that bookmark: change it instead."""
    link = checked_url(url)
    nc = await nextcloud_for(ctx)
    client = nc.api(BookmarksClient)
    there = await client.bookmarks(words=[], tags=[], folder=None, url=link, page=0, limit=1)
    if there:
        raise InvalidInput(
            f"{link[:200]} is already bookmarked (id {there[0].id}); "
            "change that one with nc_bookmarks_update_bookmark"
        )
    check_visible(title, "the title")
    fields = {
        "url": link,
        "title": title,
        "description": description,
        "tags": _tags(tags or []),
        "folders": [ROOT if folder_id is None else folder_id],
    }
    return _out(await client.add(fields))


@toolset.tool(title="Update a bookmark", idempotent=True)
@require_scopes(DECLARATION.write)
async def nc_bookmarks_update_bookmark(
    bookmark_id: BookmarkId,
    version: Annotated[str, Field(min_length=1, max_length=300, description="As listed")],
    ctx: Context[Any, Any],
    title: Annotated[str | None, Field(max_length=500)] = None,
    description: Annotated[str | None, Field(max_length=MAX_DESCRIPTION)] = None,
    tags: Annotated[Tags | None, Field(description="Replaces its tags")] = None,
    folder_id: Annotated[FolderId, Field(description="Moves it to this folder only")] = None,
) -> Annotated[CallToolResult, BookmarkOut]:
    """Change a bookmark's title, description, tags or folder. If it changed since `version` was
    read, nothing is written."""
    fields: dict[str, Any] = {}
    if title is not None:
        check_visible(title, "the title")
        fields["title"] = title
    if description is not None:
        fields["description"] = description
    if tags is not None:
        fields["tags"] = _tags(tags)
    if folder_id is not None:
        fields["folders"] = [folder_id]
    if not fields:
        raise InvalidInput("give at least one of title, description, tags, folder_id")
    nc = await nextcloud_for(ctx)
    client = nc.api(BookmarksClient)
    current = await client.bookmark(bookmark_id)
    if version.strip() != _version(current):
        changed = PreconditionFailed(
            client.host,
            f"bookmark {bookmark_id} changed since that version was read; nothing was overwritten",
            status=412,
        )
        return stale_version(changed, "bookmark", "current_bookmark", _out(current))
    return answer(_out(await client.replace(current, fields)))


@toolset.tool(title="Delete a bookmark", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_bookmarks_delete_bookmark(bookmark_id: BookmarkId, ctx: Context[Any, Any]) -> DeletedBookmark:
    """Delete a bookmark. The user is asked to approve first, seeing its title and link."""
    nc = await nextcloud_for(ctx)
    client = nc.api(BookmarksClient)
    bookmark = await client.bookmark(bookmark_id)
    link = bookmark.target or bookmark.url
    target = f"the bookmark {shown_text(bookmark.title or link, 200)}"
    question = f"Delete {target} ({shown_text(link, 300)}, tags: {', '.join(bookmark.tags[:10]) or 'none'})?"
    tool = "nc_bookmarks_delete_bookmark"
    version = _version(bookmark)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if asked and _version(await client.bookmark(bookmark_id)) != version:
        await refuse_changed(ctx, tool=tool, target=target)
    await client.delete(bookmark_id)
    return DeletedBookmark(id=bookmark.id, url=link[:4_000])
