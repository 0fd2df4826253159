"""What the file apps' toolsets (trash, versions, tags, comments) share: a path a model gives,
resolved to the file's entry with its Nextcloud file id, and times shown as ISO 8601 UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._context import nextcloud_for

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

__all__ = ["FilePath", "iso", "resolve"]

FilePath = Annotated[
    str, Field(max_length=4096, description="Path inside your files, e.g. 'Documents/report.pdf'")
]


def iso(when: datetime | int | None) -> str | None:
    if when is None:
        return None
    if isinstance(when, int):
        when = datetime.fromtimestamp(min(max(when, 0), 253_402_300_799), UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def resolve(
    ctx: Context[Any, Any], path: str, *, root_allowed: bool = False
) -> tuple[WebDAVClient, FileEntry, int]:
    """The user's files, the entry at `path` and its file id (refusing the root folder unless allowed)."""
    cleaned = paths.clean(path)
    if not cleaned and not root_allowed:
        raise InvalidInput("give the path of a file or folder, not the root folder")
    files = await (await nextcloud_for(ctx)).files()
    entry = await files.stat(cleaned)
    if entry.file_id is None:
        raise InvalidResponse(files.host, f"Nextcloud gave no file id for {paths.display(cleaned)}")
    return files, entry, entry.file_id
