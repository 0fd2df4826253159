"""What a destructive file action shows the human, and the checks that bind it to what was shown:
its ETag, size, time and file id, and its content (`nextcloud/dav/file_facts.py`, ADR 0059)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.file_facts import FileFacts
from nextcloud_mcp_server.nextcloud.errors import NotFound
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.tools._shown import bound_version

if TYPE_CHECKING:  # the WebDAV client (and httpx) load on first use, not at startup
    from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

__all__ = ["FileApproval", "approve_file_action", "human_size", "stat_or_none", "still_unchanged"]


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


DIGEST_MAX_BYTES = 64 * 1024 * 1024  # a file without Nextcloud's checksum is hashed up to this size


@dataclass(frozen=True)
class FileApproval:
    """What the human approved: the entry shown and its content binding."""

    entry: FileEntry
    binding: str


async def _facts(ctx: Context[Any, Any]) -> FileFacts:
    nc = await nextcloud_for(ctx)
    return FileFacts(nc.http, nc.credential, await nc.dav_user_id())


async def _binding(ctx: Context[Any, Any], entry: FileEntry) -> str:
    """A file's content binding (`FileFacts.binding`); a folder's is its listing's ETag, which
    Nextcloud renews from its own clock at every change below it."""
    if entry.kind != "file":
        return ""
    return await (await _facts(ctx)).binding(entry.path, max_bytes=DIGEST_MAX_BYTES)


async def approve_file_action(
    ctx: Context[Any, Any],
    files: WebDAVClient,
    entry: FileEntry,
    tool: str,
    verb: str,
    *,
    question: str | None = None,
) -> FileApproval | None:
    """Ask before `entry` is destroyed; a `FileApproval` when the human approved (the action must
    then touch only the version shown: `still_unchanged`), None when approvals are off. Declines
    raise. The approval is bound to the file's content, not only its ETag, size and times."""
    if not runtime_of(ctx).settings.confirm_destructive:
        return None
    binding = await _binding(ctx, entry)
    if question is None:
        description = await _describe(files, entry)
        question = f"{verb.format(target=description)}?"
    if binding.startswith("unread:"):
        question += (
            f" (It is larger than {human_size(DIGEST_MAX_BYTES)} and Nextcloud keeps no checksum of it: "
            "a rewrite with the same size and time by a sync client while you decide would not be noticed.)"
        )
    target = paths.display(entry.path)
    version = bound_version(entry.etag or "-", binding)
    await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    return FileApproval(entry, binding)


def _version(entry: FileEntry) -> tuple[object, ...]:
    """What identifies the version of a file or folder besides its content binding: the ETag
    alone does not (ADR 0059)."""
    return (entry.kind, entry.etag, entry.size, entry.modified, entry.file_id)


async def still_unchanged(
    ctx: Context[Any, Any],
    files: WebDAVClient,
    shown: FileEntry,
    tool: str,
    approval: FileApproval | None = None,
) -> None:
    """After approval: refuse when the target is no longer the version that was shown, its
    content included (`approval.binding`, read again)."""
    now = await stat_or_none(files, shown.path)
    if now is None or _version(now) != _version(shown):
        await refuse_changed(ctx, tool=tool, target=paths.display(shown.path))
    if approval is not None and approval.binding and await _binding(ctx, now) != approval.binding:
        await refuse_changed(ctx, tool=tool, target=paths.display(shown.path))
