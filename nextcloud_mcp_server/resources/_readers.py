"""Reading one resource, through the same Nextcloud client code and limits as the tools: a note
as Markdown, a file with its own MIME type (text inline, anything else as a base64 blob, a file
above the read limit described instead of sent), a calendar day or week as JSON, a contact as its
vCard."""

from __future__ import annotations

import base64
import json
import mimetypes
from datetime import timedelta
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import BlobResourceContents, TextResourceContents

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.models import FileEntry, Note
from nextcloud_mcp_server.resources._uris import BadUri, note_id, span_of
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.toolsets.calendar.tools_events import nc_calendar_list_events
from nextcloud_mcp_server.toolsets.files.tools import TEXT_TYPES
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = [
    "ETAG_META",
    "FILE_META",
    "MAX_EVENTS",
    "MAX_UID_CHARS",
    "Contents",
    "note_markdown",
    "read_calendar",
    "read_contact",
    "read_file",
    "read_note",
]

Contents = list[TextResourceContents | BlobResourceContents]
ETAG_META = "nextcloud-mcp/etag"
FILE_META = "nextcloud-mcp/file"
MAX_EVENTS = 500  # occurrences in a day or week; more are cut and `truncated` says so
MAX_UID_CHARS = 200  # what a CardDAV query for a uid takes (the contacts tools' limit)


def _one(values: dict[str, str | list[str]], name: str) -> str:
    value = values.get(name, "")
    return value if isinstance(value, str) else "/".join(value)


def note_markdown(note: Note) -> str:
    """The note as Markdown with its title: the Notes app keeps the title as the first line of
    most notes already; otherwise it becomes a heading above the content."""
    content = note.content or ""
    first = content.lstrip("\ufeff").partition("\n")[0].strip().lstrip("#").strip()
    if note.title and first == note.title.strip():
        return content
    return f"# {note.title}\n\n{content}" if content else f"# {note.title}\n"


async def read_note(ctx: Context[Any, Any], uri: str, values: dict[str, str | list[str]]) -> Contents:
    note = await (await nextcloud_for(ctx)).api(NotesClient).get(note_id(_one(values, "id")))
    meta = {ETAG_META: note.etag, "nextcloud-mcp/category": note.category}
    return [TextResourceContents(uri=uri, mime_type="text/markdown", text=note_markdown(note), _meta=meta)]


def _is_text(mime: str, charset: str | None) -> bool:
    return bool(charset) or mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml"))


def _file_meta(entry: FileEntry, mime: str, size: int | None, sent: bool) -> dict[str, Any]:
    return {
        FILE_META: {
            "path": paths.display(entry.path),
            "name": entry.name,
            "size": size,
            "mime": mime,
            "etag": entry.etag,
            "sent": sent,
        }
    }


def _described(uri: str, entry: FileEntry, mime: str, size: int | None, cap: int) -> Contents:
    """What is said of a file too large to send: its name, size and type, and that it was not sent."""
    shown = f"{size} bytes" if size is not None else "size unknown"
    text = (
        f"{entry.name} ({paths.display(entry.path)}): {shown}, {mime}.\n"
        f"Not sent: a resource carries files of at most {cap} bytes (FILES_MAX_READ_BYTES). "
        "Read it in pages with the nc_webdav_read_file tool."
    )
    return [
        TextResourceContents(
            uri=uri, mime_type="text/plain", text=text, _meta=_file_meta(entry, mime, size, False)
        )
    ]


async def read_file(ctx: Context[Any, Any], uri: str, values: dict[str, str | list[str]]) -> Contents:
    path = paths.clean(_one(values, "path"))
    if not path:
        raise BadUri("name a file, e.g. nextcloud://files/Documents/report.pdf")
    cap = runtime_of(ctx).settings.files_max_read_bytes
    files = await (await nextcloud_for(ctx)).files()
    entry = await files.stat(path)
    if entry.kind == "directory":
        raise BadUri(f"{paths.display(path)} is a folder, not a file; list it with nc_webdav_list_directory")
    mime = entry.mime or mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
    if entry.size is not None and entry.size > cap:
        return _described(uri, entry, mime, entry.size, cap)  # never downloaded
    page = await files.read(path, length=cap + 1)  # one byte more tells a file that grew meanwhile
    size = page.total if page.total is not None else len(page.data)
    if len(page.data) > cap:
        return _described(uri, entry, mime, size, cap)
    mime = page.mime or mime
    text = None
    if _is_text(mime, page.charset):
        try:
            text = page.data.decode(page.charset or "utf-8")
        except (UnicodeDecodeError, LookupError):
            text = None  # not text after all: sent as bytes
    meta = _file_meta(entry, mime, size, True)
    if text is not None:
        return [TextResourceContents(uri=uri, mime_type=mime, text=text, _meta=meta)]
    blob = base64.b64encode(page.data).decode("ascii")
    return [BlobResourceContents(uri=uri, mime_type=mime, blob=blob, _meta=meta)]


async def read_calendar(ctx: Context[Any, Any], uri: str, values: dict[str, str | list[str]]) -> Contents:
    """The events of a day or an ISO week in every calendar, or in the one the URI names, recurring
    ones expanded: what nc_calendar_list_events answers for that range, in the default time zone."""
    asked = _one(values, "date")
    span = span_of(asked)
    calendar = _one(values, "calendar") if "calendar" in values else None
    if calendar is not None and not 0 < len(calendar) <= MAX_UID_CHARS:
        raise BadUri(f"the calendar id must be 1 to {MAX_UID_CHARS} characters")
    listed = await nc_calendar_list_events(
        start=span.first.isoformat(), end=span.end.isoformat(), ctx=ctx, calendar=calendar, limit=MAX_EVENTS
    )
    body = {
        **({"calendar": calendar} if calendar is not None else {}),
        "date": asked,
        "span": span.kind,
        "first_day": span.first.isoformat(),
        "last_day": (span.end - timedelta(days=1)).isoformat(),
        "timezone": runtime_of(ctx).settings.default_timezone,
        **listed.model_dump(mode="json"),
    }
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return [TextResourceContents(uri=uri, mime_type="application/json", text=text)]


async def read_contact(ctx: Context[Any, Any], uri: str, values: dict[str, str | list[str]]) -> Contents:
    book_id, uid = _one(values, "addressbook"), _one(values, "uid")
    for name, value in (("address book", book_id), ("uid", uid)):
        if not value or len(value) > MAX_UID_CHARS:
            raise BadUri(f"the {name} must be 1 to {MAX_UID_CHARS} characters")
    carddav = (await nextcloud_for(ctx)).carddav
    card = await carddav.find(await carddav.address_book(book_id), uid)
    return [
        TextResourceContents(uri=uri, mime_type="text/vcard", text=card.vcard, _meta={ETAG_META: card.etag})
    ]
