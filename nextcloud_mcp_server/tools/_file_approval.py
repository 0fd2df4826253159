"""What a destructive file action shows the human, and the checks that bind it to what was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import NotFound
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import runtime_of

if TYPE_CHECKING:  # the WebDAV client (and httpx) load on first use, not at startup
    from nextcloud_mcp_server.nextcloud.webdav import WebDAVClient

__all__ = ["approve_file_action", "human_size", "stat_or_none", "still_unchanged"]


def human_size(count: int | None) -> str:
    if count is None:
        return "unknown size"
    value, unit = float(count), "bytes"
    for bigger in ("KB", "MB", "GB", "TB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{count} bytes" if unit == "bytes" else f"{value:.1f} {unit}"


async def _describe(files: WebDAVClient, entry: FileEntry) -> str:
    """What a person needs to know before it is destroyed: path, size, last change, contents."""
    when = entry.modified.strftime("%Y-%m-%d %H:%M UTC") if entry.modified else "an unknown time"
    if entry.kind == "directory":
        count = 0
        async for _ in files.iter_directory(entry.path):
            count += 1
        total = f" ({human_size(entry.size)} in total)" if entry.size is not None else ""
        inside = f"{count} item(s) directly inside{total}"
        return f"the folder {paths.display(entry.path)} with {inside}, last changed {when}"
    return f"the file {paths.display(entry.path)} ({human_size(entry.size)}, last changed {when})"


async def stat_or_none(files: WebDAVClient, path: str) -> FileEntry | None:
    try:
        return await files.stat(path)
    except NotFound:
        return None


async def approve_file_action(
    ctx: Context[Any, Any], files: WebDAVClient, entry: FileEntry, tool: str, verb: str
) -> bool:
    """Ask before `entry` is destroyed; True when the human approved (and the action must then
    touch only the version shown), False when approvals are off. Declines raise."""
    if not runtime_of(ctx).settings.confirm_destructive:
        return False
    description = await _describe(files, entry)
    question = f"{verb.format(target=description)}?"
    target = paths.display(entry.path)
    return await require_approval(ctx, tool=tool, target=target, question=question, version=entry.etag)


def _version(entry: FileEntry) -> tuple[object, ...]:
    """What identifies the version of a file or folder. The ETag alone does not: Nextcloud 29
    keeps a file's ETag when it is replaced within the same second of its last change
    (tests/fixtures/nextcloud/webdav_same_second_*.txt), so size and file id count too. A
    replacement of the same size within the same second stays indistinguishable."""
    return (entry.kind, entry.etag, entry.size, entry.modified, entry.file_id)


async def still_unchanged(ctx: Context[Any, Any], files: WebDAVClient, shown: FileEntry, tool: str) -> None:
    """After approval: refuse when the target is no longer the version that was shown."""
    now = await stat_or_none(files, shown.path)
    if now is None or _version(now) != _version(shown):
        await refuse_changed(ctx, tool=tool, target=paths.display(shown.path))
