"""Files toolset (WebDAV). Names match the widely used Nextcloud MCP server."""

from __future__ import annotations

import base64
import binascii
import codecs
import mimetypes
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, TextContent
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._approval import refuse_changed
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.tools._file_approval import (
    approve_file_action,
    human_size,
    stat_or_none,
    still_unchanged,
)
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._versions import given_etag
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("files")

Path = Annotated[
    str, Field(max_length=4096, description="Path inside your files, e.g. 'Documents/report.pdf'")
]
TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml")


class FileInfo(BaseModel):
    path: str
    name: str
    type: Literal["file", "directory"]
    size: int | None = None
    modified: str | None = Field(default=None, description="ISO 8601 UTC")
    etag: str | None = None
    mime: str | None = None


class DirectoryListing(BaseModel):
    path: str
    entries: list[FileInfo]
    total: int = Field(description="Entries in the folder before limit/offset")


class ReadResult(BaseModel):
    path: str
    mime: str
    encoding: str | None = Field(description="Text encoding, or null when returned as binary")
    offset: int
    length: int = Field(description="Bytes returned")
    size: int | None = Field(description="Size of the whole file")
    next_offset: int | None = Field(description="Where the next page starts; null at the end")
    etag: str | None = None


class WrittenFile(BaseModel):
    path: str
    etag: str | None
    created: bool = Field(description="True for a new file, false when one was replaced")
    size: int


class PathResult(BaseModel):
    path: str
    type: Literal["file", "directory"] | None = None


class TransferResult(BaseModel):
    source: str
    destination: str
    replaced: bool = Field(description="True when an existing target was overwritten")


class SearchResult(BaseModel):
    files: list[FileInfo]


def _info(entry: FileEntry) -> FileInfo:
    modified = entry.modified.isoformat().replace("+00:00", "Z") if entry.modified else None
    return FileInfo(
        path=paths.display(entry.path),
        name=entry.name,
        type=entry.kind,
        size=entry.size,
        modified=modified,
        etag=entry.etag,
        mime=entry.mime,
    )


def _is_text(mime: str, charset: str | None) -> bool:
    return bool(charset) or mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml"))


def _decode_page(data: bytes, encoding: str, at_end: bool) -> tuple[str, int, int] | None:
    """Text of a page cut at character boundaries: (text, bytes skipped at the start, bytes used).
    None when the bytes are not text in that encoding."""
    skipped = 0
    if encoding.lower().replace("-", "") == "utf8":
        while skipped < min(3, len(data)) and data[skipped] & 0xC0 == 0x80:
            skipped += 1  # an offset in the middle of a character: start at the next one
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        text = decoder.decode(data[skipped:], final=at_end)
    except (UnicodeDecodeError, LookupError):
        return None
    pending = len(decoder.getstate()[0])  # bytes of a character cut by the page end
    return text, skipped, len(data) - pending


@toolset.tool(title="List a folder", read_only=True)
@require_scopes(FILES_READ)
async def nc_webdav_list_directory(
    ctx: Context[Any, Any],
    path: Path = "/",
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> DirectoryListing:
    """List a folder: name, type, size, last change, etag and MIME type of each entry.
    Folders come first, then files, by name."""
    folder = paths.clean(path)
    files = await (await nextcloud_for(ctx)).files()
    bound, total = offset + limit, 0
    # Only about offset+limit entries are kept while a listing of any size streams in.
    kept: list[tuple[tuple[bool, str, str], FileEntry]] = []
    async for entry in files.iter_directory(folder, itself=True):
        if entry.path == folder:
            if entry.kind != "directory":
                raise InvalidInput(
                    f"{paths.display(folder)} is a file, not a folder; read it with nc_webdav_read_file"
                )
            continue
        total += 1
        kept.append(((entry.kind != "directory", entry.name.casefold(), entry.name), entry))
        if len(kept) >= 2 * bound + 64:
            kept.sort(key=lambda item: item[0])
            del kept[bound:]
    kept.sort(key=lambda item: item[0])
    page = [_info(entry) for _, entry in kept[offset:bound]]
    return DirectoryListing(path=paths.display(folder), entries=page, total=total)


def _check_offset(path: str, offset: int, size: int | None) -> None:
    """Past the end there is nothing to read: say so (Nextcloud answers 416 with an HTML page)."""
    if size is not None and offset > 0 and offset >= size:
        raise InvalidInput(
            f"offset {offset} is beyond the end of {paths.display(path)}, which is {size} bytes "
            f"(offsets 0 to {max(size - 1, 0)})"
        )


@toolset.tool(title="Read a file", read_only=True)
@require_scopes(FILES_READ)
async def nc_webdav_read_file(
    path: Path,
    ctx: Context[Any, Any],
    offset: Annotated[int, Field(ge=0, description="Byte offset to start at")] = 0,
    length: Annotated[int | None, Field(ge=1, description="Bytes to read (capped per call)")] = None,
) -> Annotated[CallToolResult, ReadResult]:
    """Read a file. Text comes back as text (decoded by its charset), anything else as a binary
    resource with its MIME type. Large files are read in pages: pass next_offset to continue."""
    cleaned = paths.clean(path)
    if not cleaned:
        raise InvalidInput("give a file path; use nc_webdav_list_directory for folders")
    cap = runtime_of(ctx).settings.files_max_read_bytes
    wanted = min(length or cap, cap)
    files = await (await nextcloud_for(ctx)).files()
    entry = await files.stat(cleaned)
    if entry.kind == "directory":
        raise InvalidInput(f"{paths.display(cleaned)} is a folder; use nc_webdav_list_directory")
    _check_offset(cleaned, offset, entry.size)
    page = await files.read(cleaned, offset=offset, length=wanted)
    size = page.total if page.total is not None else entry.size
    _check_offset(cleaned, offset, size)
    at_end = size is None or offset + len(page.data) >= size
    mime = page.mime or entry.mime or "application/octet-stream"
    decoded = (
        _decode_page(page.data, page.charset or "utf-8", at_end) if _is_text(mime, page.charset) else None
    )
    if decoded is not None:
        text, skipped, used = decoded
        start, consumed = offset + skipped, used - skipped
        encoding: str | None = page.charset or "utf-8"
    else:
        text, start, consumed, encoding = None, offset, len(page.data), None
    end = start + consumed
    next_offset = None if (size is not None and end >= size) or consumed == 0 else end
    meta = ReadResult(
        path=paths.display(cleaned),
        mime=mime,
        encoding=encoding,
        offset=start,
        length=consumed,
        size=size,
        next_offset=next_offset,
        etag=page.etag or entry.etag,
    )
    header = f"{meta.path} ({mime}, bytes {start}-{end} of {size if size is not None else '?'})" + (
        f"; more from next_offset={next_offset}" if next_offset is not None else ""
    )
    blocks: list[ContentBlock] = [TextContent(type="text", text=header)]
    if text is not None:
        blocks.append(TextContent(type="text", text=text))
    else:
        blob = base64.b64encode(page.data[:consumed]).decode("ascii")
        uri = f"nextcloud://files/{paths.encode(cleaned)}"
        blocks.append(
            EmbeddedResource(
                type="resource", resource=BlobResourceContents(uri=uri, mime_type=mime, blob=blob)
            )
        )
    return CallToolResult(content=blocks, structured_content=meta.model_dump())


Content = Annotated[str, Field(description="The file's content: text, or base64 with encoding='base64'")]
ContentType = Annotated[str | None, Field(description="MIME type; guessed from the name if absent")]
CreateParents = Annotated[bool, Field(description="Create missing parent folders")]


def _payload(path: str, content: str, encoding: str, content_type: str | None) -> tuple[bytes, str]:
    """The bytes to upload and their MIME type (text is stored as UTF-8)."""
    if encoding == "base64":
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("content is not valid base64") from None
    else:
        data = content.encode("utf-8")
    guessed = mimetypes.guess_type(path)[0]
    mime = content_type or (f"{guessed}; charset=utf-8" if guessed and encoding == "text" else guessed)
    fallback = "text/plain; charset=utf-8" if encoding == "text" else "application/octet-stream"
    return data, mime or fallback


@toolset.tool(title="Create a file")
@require_scopes(FILES_WRITE)
async def nc_webdav_create_file(
    path: Path,
    content: Content,
    ctx: Context[Any, Any],
    encoding: Literal["text", "base64"] = "text",
    content_type: ContentType = None,
    create_parents: CreateParents = False,
) -> WrittenFile:
    """Create a new file. Never replaces anything: fails if the path exists (use
    nc_webdav_write_file with overwrite=true to replace a file)."""
    cleaned = paths.clean(path)
    data, mime = _payload(cleaned, content, encoding, content_type)
    files = await (await nextcloud_for(ctx)).files()
    result = await files.write(
        cleaned, data, content_type=mime, overwrite=False, create_parents=create_parents
    )
    return WrittenFile(path=paths.display(cleaned), etag=result.etag, created=result.created, size=len(data))


@toolset.tool(title="Write a file", destructive=True)
@require_scopes(FILES_WRITE)
async def nc_webdav_write_file(
    path: Path,
    content: Content,
    ctx: Context[Any, Any],
    encoding: Literal["text", "base64"] = "text",
    content_type: ContentType = None,
    overwrite: Annotated[bool, Field(description="Replace an existing file (off: refuse)")] = False,
    if_match: Annotated[
        str | None, Field(description="Only replace if the file's etag is still this")
    ] = None,
    create_parents: CreateParents = False,
) -> WrittenFile:
    """Create a file, or replace one with overwrite=true (or if_match=<etag> to replace only the
    version you read). Replacing asks the user to approve first (unless the server is set up not
    to ask). Text is stored as UTF-8."""
    cleaned = paths.clean(path)
    tool = "nc_webdav_write_file"
    given = given_etag(if_match, "if_match") if if_match is not None else None
    data, mime = _payload(cleaned, content, encoding, content_type)
    files = await (await nextcloud_for(ctx)).files()
    asked = False
    if_match = None  # only ever Nextcloud's own ETag of the version compared (and shown)
    if given or (overwrite and runtime_of(ctx).settings.confirm_destructive):
        existing = await stat_or_none(files, cleaned)
        if existing is not None and existing.kind == "directory":
            raise InvalidInput(f"{paths.display(cleaned)} is a folder; a file cannot replace it")
        if existing is None:
            overwrite = False  # nothing to replace: create, never replace unseen
        else:
            if given and given != existing.etag:
                raise PreconditionFailed(
                    files.host,
                    f"{paths.display(cleaned)} changed since its etag was read; nothing was written",
                    status=412,
                )
            verb = "Replace {target} with new content (" + human_size(len(data)) + ")"
            asked = await approve_file_action(ctx, files, existing, tool, verb)
            if_match = existing.etag
    try:
        result = await files.write(
            cleaned,
            data,
            content_type=mime,
            overwrite=overwrite,
            if_match=if_match,
            create_parents=create_parents,
        )
    except PreconditionFailed:
        if not asked:
            raise
        await refuse_changed(ctx, tool=tool, target=paths.display(cleaned))
    return WrittenFile(path=paths.display(cleaned), etag=result.etag, created=result.created, size=len(data))


@toolset.tool(title="Create a folder")
@require_scopes(FILES_WRITE)
async def nc_webdav_create_directory(
    path: Path,
    ctx: Context[Any, Any],
    parents: Annotated[bool, Field(description="Also create missing parent folders")] = False,
) -> PathResult:
    """Create a folder; with parents=true, missing parent folders are created too. Fails if
    something already exists at that path."""
    cleaned = paths.clean(path)
    files = await (await nextcloud_for(ctx)).files()
    if parents:
        await files.make_directories(cleaned)
    else:
        await files.make_directory(cleaned)
    return PathResult(path=paths.display(cleaned), type="directory")


@toolset.tool(title="Delete a file or folder", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
async def nc_webdav_delete_resource(path: Path, ctx: Context[Any, Any]) -> PathResult:
    """Delete a file, or a folder with everything in it. The user is asked to approve first
    (unless the server is set up not to ask). With Nextcloud's trash bin enabled (the default) it
    can be restored from the Files app."""
    cleaned = paths.clean(path)
    if not cleaned:
        raise InvalidInput("refusing to delete the root folder")
    tool = "nc_webdav_delete_resource"
    files = await (await nextcloud_for(ctx)).files()
    entry = await files.stat(cleaned)
    asked = await approve_file_action(ctx, files, entry, tool, "Delete {target}")
    if asked:
        await still_unchanged(ctx, files, entry, tool)
    # Real Nextcloud answers 412 to If-Match on a collection even when the ETag is current, so a
    # folder is bound to what was shown only by the re-read above; a file also by If-Match.
    if_match = entry.etag if asked and entry.kind == "file" else None
    try:
        await files.delete(cleaned, if_match=if_match)
    except PreconditionFailed:
        await refuse_changed(ctx, tool=tool, target=paths.display(cleaned))
    return PathResult(path=paths.display(cleaned), type=entry.kind)


async def _transfer(
    method: str, ctx: Context[Any, Any], source: str, destination: str, overwrite: bool
) -> Any:
    src, dst = paths.clean(source), paths.clean(destination)
    files = await (await nextcloud_for(ctx)).files()
    tool = f"nc_webdav_{'move' if method == 'MOVE' else 'copy'}_resource"
    replace_etag = None
    if overwrite and src and dst and runtime_of(ctx).settings.confirm_destructive:
        existing = await stat_or_none(files, dst)
        if existing is None:
            overwrite = False  # nothing to replace; never replace one that appears meanwhile
        else:
            verb = f"{method.capitalize()} {paths.display(src)} onto {{target}}, replacing it"
            if await approve_file_action(ctx, files, existing, tool, verb):
                # Re-read (the ETag alone can miss a replacement), then for a file let Nextcloud
                # check the ETag at the MOVE/COPY itself; a folder takes no such condition.
                await still_unchanged(ctx, files, existing, tool)
                if existing.kind == "file" and existing.etag:
                    replace_etag = existing.etag
    try:
        created = await files.transfer(method, src, dst, overwrite=overwrite, replace_etag=replace_etag)
    except PreconditionFailed:
        if replace_etag:
            await refuse_changed(ctx, tool=tool, target=paths.display(dst))
        raise
    return TransferResult(source=paths.display(src), destination=paths.display(dst), replaced=not created)


@toolset.tool(title="Move or rename", destructive=True)
@require_scopes(FILES_WRITE)
async def nc_webdav_move_resource(
    source: Path,
    destination: Path,
    ctx: Context[Any, Any],
    overwrite: Annotated[bool, Field(description="Replace an existing target (off: refuse)")] = False,
) -> TransferResult:
    """Move or rename a file or folder. An existing target is only replaced with overwrite=true,
    and the user is asked to approve that first (unless the server is set up not to ask)."""
    result: TransferResult = await _transfer("MOVE", ctx, source, destination, overwrite)
    return result


@toolset.tool(title="Copy", destructive=True)
@require_scopes(FILES_WRITE)
async def nc_webdav_copy_resource(
    source: Path,
    destination: Path,
    ctx: Context[Any, Any],
    overwrite: Annotated[bool, Field(description="Replace an existing target (off: refuse)")] = False,
) -> TransferResult:
    """Copy a file or folder. An existing target is only replaced with overwrite=true, and the
    user is asked to approve that first (unless the server is set up not to ask)."""
    result: TransferResult = await _transfer("COPY", ctx, source, destination, overwrite)
    return result


@toolset.tool(title="Search files", read_only=True)
@require_scopes(FILES_READ)
async def nc_webdav_search_files(
    ctx: Context[Any, Any],
    name_pattern: Annotated[
        str | None,
        Field(max_length=255, description="Name contains this, or a glob such as '*.pdf' or 'report-202?-*'"),
    ] = None,
    mime_type: Annotated[
        str | None, Field(max_length=255, description="e.g. 'application/pdf' or 'image/*'")
    ] = None,
    modified_since: Annotated[str | None, Field(description="ISO 8601 date or date-time")] = None,
    path: Annotated[str, Field(description="Folder to search in, with its subfolders")] = "/",
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
) -> SearchResult:
    """Find files by name, MIME type and/or modification time, newest first (server-side search)."""
    from nextcloud_mcp_server.nextcloud.webdav import SearchFilter

    since = None
    if modified_since:
        try:
            since = datetime.fromisoformat(modified_since.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"modified_since '{modified_since}' is not an ISO 8601 date") from None
        if since.tzinfo is None:
            since = since.astimezone()
    where = SearchFilter(name_pattern=name_pattern or None, mime_type=mime_type or None, modified_since=since)
    files = await (await nextcloud_for(ctx)).files()
    found = await files.search(where, path=paths.clean(path), limit=limit)
    return SearchResult(files=[_info(e) for e in found])
