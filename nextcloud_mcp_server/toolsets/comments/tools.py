"""Comments toolset: comments on files and folders (app comments)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.tools._audience import approve_publication
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_target import FilePath, iso, resolve
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.comments.client import (
    MAX_MESSAGE,
    MAX_PAGE,
    Comment,
    CommentsClient,
    check_message,
)
from nextcloud_mcp_server.toolsets.comments.tools_audience import file_audience
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("comments")


class CommentInfo(BaseModel):
    id: int
    author: str
    author_id: str
    message: str
    created: str | None = Field(description="ISO 8601 UTC")
    mentions: list[str] = Field(default_factory=list, description="User ids mentioned with @")


class CommentList(BaseModel):
    path: str
    comments: list[CommentInfo]
    next_offset: int | None = Field(description="Where the next (older) page starts; null at the end")


class AddedComment(BaseModel):
    path: str
    id: int | None


def _info(comment: Comment) -> CommentInfo:
    return CommentInfo(
        id=comment.id,
        author=comment.author,
        author_id=comment.author_id,
        message=comment.message,
        created=iso(comment.created),
        mentions=comment.mentions,
    )


@toolset.tool(title="List comments", read_only=True)
@require_scopes(FILES_READ)
async def nc_comments_list(
    path: FilePath,
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE - 1)] = 20,
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0,
) -> CommentList:
    """List the comments on a file or folder, newest first: author, text, time, mentions."""
    _, entry, file_id = await resolve(ctx, path)
    comments = await (await nextcloud_for(ctx)).dav_api(CommentsClient)
    found = await comments.list_comments(file_id, limit=limit + 1, offset=offset)
    return CommentList(
        path=paths.display(entry.path),
        comments=[_info(c) for c in found[:limit]],
        next_offset=offset + limit if len(found) > limit else None,
    )


@toolset.tool(title="Comment on a file", view=APPROVAL)
@require_scopes(FILES_WRITE)
async def nc_comments_add(
    path: FilePath,
    message: Annotated[
        str, Field(min_length=1, max_length=MAX_MESSAGE, description="Plain text; @user mentions a user")
    ],
    ctx: Context[Any, Any],
) -> AddedComment:
    """Add a comment to a file or folder, visible to everyone it is shared with; where that is
    more than one other person, the user is asked to approve it first."""
    check_message(message)
    _, entry, file_id = await resolve(ctx, path)
    nc = await nextcloud_for(ctx)
    await approve_publication(
        ctx,
        tool="nc_comments_add",
        audience=await file_audience(nc, entry.path, message),
        text=message,
        action="Comment",
        again=lambda: file_audience(nc, entry.path, message),
    )
    comments = await nc.dav_api(CommentsClient)
    return AddedComment(path=paths.display(entry.path), id=await comments.add(file_id, message))
