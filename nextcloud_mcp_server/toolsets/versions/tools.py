"""Versions toolset: older versions of a file (app files_versions). Restoring one asks the human
first: it replaces the current content (which is kept as a version)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_approval import approve_file_action, human_size, still_unchanged
from nextcloud_mcp_server.tools._file_target import FilePath, iso, resolve
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.versions.client import FileVersion, VersionsClient, check_version_id
from nextcloud_mcp_server.views import APPROVAL

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

__all__ = ["toolset"]

toolset = Toolset("versions")


class VersionInfo(BaseModel):
    version: str = Field(description="Pass this to nc_versions_restore")
    modified: str | None = Field(description="ISO 8601 UTC")
    size: int | None = None
    current: bool = Field(description="True for the file's current content")
    label: str | None = None
    author: str | None = None


class VersionList(BaseModel):
    path: str
    versions: list[VersionInfo]
    total: int = Field(description="Versions before limit/offset")


class RestoredVersion(BaseModel):
    path: str
    version: str
    size: int | None = None


def _is_current(version: FileVersion, entry: FileEntry) -> bool:
    return entry.modified is not None and version.id == str(int(entry.modified.timestamp()))


def _info(version: FileVersion, entry: FileEntry) -> VersionInfo:
    return VersionInfo(
        version=version.id,
        modified=iso(version.modified),
        size=version.size,
        current=_is_current(version, entry),
        label=version.label,
        author=version.author,
    )


async def _file(ctx: Context[Any, Any], path: str) -> tuple[WebDAVClient, FileEntry, int]:
    files, entry, file_id = await resolve(ctx, path)
    if entry.kind != "file":
        raise InvalidInput(f"{paths.display(entry.path)} is a folder; only files have versions")
    return files, entry, file_id


@toolset.tool(title="List a file's versions", read_only=True)
@require_scopes(FILES_READ)
async def nc_versions_list(
    path: FilePath,
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
) -> VersionList:
    """List a file's versions, newest first; the current content is marked current."""
    _, entry, file_id = await _file(ctx, path)
    versions = await (await nextcloud_for(ctx)).dav_api(VersionsClient)
    found = await versions.list_versions(file_id)
    page = [_info(v, entry) for v in found[offset : offset + limit]]
    return VersionList(path=paths.display(entry.path), versions=page, total=len(found))


@toolset.tool(title="Restore a version", destructive=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
async def nc_versions_restore(
    path: FilePath,
    version: Annotated[str, Field(max_length=20, description="A version from nc_versions_list")],
    ctx: Context[Any, Any],
) -> RestoredVersion:
    """Make an older version the file's current content; the current content is kept as a
    version. The user is asked to approve first (unless the server is set up not to ask)."""
    tool = "nc_versions_restore"
    check_version_id(version)
    files, entry, file_id = await _file(ctx, path)
    versions = await (await nextcloud_for(ctx)).dav_api(VersionsClient)
    chosen = next((v for v in await versions.list_versions(file_id) if v.id == version), None)
    shown = paths.display(entry.path)
    if chosen is None:
        raise NotFound(
            versions.host, f"{shown} has no version {version} (list them with nc_versions_list)", status=404
        )
    if _is_current(chosen, entry):
        raise InvalidInput(f"version {version} is the current content of {shown}")
    current = entry.modified.strftime("%Y-%m-%d %H:%M UTC") if entry.modified else "an unknown time"
    question = (
        f"Replace the current content of {shown} ({human_size(entry.size)}, last changed {current}) with "
        f"its version of {iso(chosen.modified)} ({human_size(chosen.size)})? The current content is kept "
        "as a version."
    )
    if approval := await approve_file_action(ctx, files, entry, tool, "", question=question):
        await still_unchanged(ctx, files, entry, tool, approval)
    await versions.restore(file_id, version)
    return RestoredVersion(path=shown, version=version, size=chosen.size)
