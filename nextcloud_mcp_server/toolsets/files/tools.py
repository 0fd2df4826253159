"""Files toolset (WebDAV). Names match the widely used Nextcloud MCP server."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, TextContent
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.file_search import SearchFilter, search_files
from nextcloud_mcp_server.nextcloud.dav.folder_listing import list_folder
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
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
from nextcloud_mcp_server.toolsets.files.tools_common import (
    TEXT_TYPES,
    FileInfo,
    check_offset,
    decode_page,
    file_info,
    forgets_listings,
    is_text,
    payload,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["TEXT_TYPES", "DirectoryListing", "FileInfo", "toolset"]

toolset = Toolset("files")

Path = Annotated[
    str, Field(max_length=4096, description="Path inside your files, e.g. 'Documents/report.pdf'")
]


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


@toolset.tool(title="List a folder", read_only=True)
@require_scopes(FILES_READ)
async def nc_webdav_list_directory(
    ctx: Context[Any, Any],
    path: Path = "/",
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> DirectoryListing:
    """List a folder: name, type, size, last change, etag and MIME type of each entry.
    Folders come first, then files, by name. Large folders come in pages (limit, offset)."""
    folder = paths.clean(path)
    nc = await nextcloud_for(ctx)
    files = await nc.files()

    async def progress(read: int) -> None:
        await ctx.report_progress(read, None, f"{read} entries of {paths.display(folder)} read")

    listing = await list_folder(files, folder, top=offset + limit, answers=nc.answers, progress=progress)
    if listing.itself.kind != "directory":
        raise InvalidInput(
            f"{paths.display(folder)} is a file, not a folder; read it with nc_webdav_read_file"
        )
    page = [file_info(entry) for entry in listing.entries[offset : offset + limit]]
    return DirectoryListing(path=paths.display(folder), entries=page, total=listing.total)


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
    check_offset(cleaned, offset, entry.size)
    page = await files.read(cleaned, offset=offset, length=wanted)
    size = page.total if page.total is not None else entry.size
    check_offset(cleaned, offset, size)
    at_end = size is None or offset + len(page.data) >= size
    mime = page.mime or entry.mime or "application/octet-stream"
    decoded = decode_page(page.data, page.charset or "utf-8", at_end) if is_text(mime, page.charset) else None
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


@toolset.tool(title="Create a file")
@require_scopes(FILES_WRITE)
@forgets_listings
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
    data, mime = payload(cleaned, content, encoding, content_type)
    files = await (await nextcloud_for(ctx)).files()
    result = await files.write(
        cleaned, data, content_type=mime, overwrite=False, create_parents=create_parents
    )
    return WrittenFile(path=paths.display(cleaned), etag=result.etag, created=result.created, size=len(data))


@toolset.tool(title="Write a file", destructive=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
@forgets_listings
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
    data, mime = payload(cleaned, content, encoding, content_type)
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
            approval = await approve_file_action(ctx, files, existing, tool, verb)
            if approval:
                await still_unchanged(ctx, files, existing, tool, approval)
            asked = approval is not None
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
@forgets_listings
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
@forgets_listings
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
    approval = await approve_file_action(ctx, files, entry, tool, "Delete {target}")
    asked = approval is not None
    if approval:
        await still_unchanged(ctx, files, entry, tool, approval)
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
            if approval := await approve_file_action(ctx, files, existing, tool, verb):
                # Re-read (the ETag alone can miss a replacement), then for a file let Nextcloud
                # check the ETag at the MOVE/COPY itself; a folder takes no such condition.
                await still_unchanged(ctx, files, existing, tool, approval)
                if existing.kind == "file" and existing.etag:
                    replace_etag = existing.etag
    try:
        created = await files.transfer(method, src, dst, overwrite=overwrite, replace_etag=replace_etag)
    except PreconditionFailed:
        if replace_etag:
            await refuse_changed(ctx, tool=tool, target=paths.display(dst))
        raise
    return TransferResult(source=paths.display(src), destination=paths.display(dst), replaced=not created)


@toolset.tool(title="Move or rename", destructive=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
@forgets_listings
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


@toolset.tool(title="Copy", destructive=True, view=APPROVAL)
@require_scopes(FILES_WRITE)
@forgets_listings
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
    since = None
    if modified_since:
        try:
            since = datetime.fromisoformat(modified_since.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"modified_since '{modified_since[:40]}' is not an ISO 8601 date") from None
        if not 1970 <= since.year <= 9998:  # a Unix time: year 1 raised from the search
            raise InvalidInput("modified_since must be between the years 1970 and 9998")
        if since.tzinfo is None:
            since = since.astimezone()
    where = SearchFilter(name_pattern=name_pattern or None, mime_type=mime_type or None, modified_since=since)
    files = await (await nextcloud_for(ctx)).files()
    found = await search_files(files, where, path=paths.clean(path), limit=limit)
    return SearchResult(files=[file_info(e) for e in found])
