"""Helpers of the files toolset: text or binary pages, upload payloads, and forgetting kept
folder listings after a change."""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import functools
import mimetypes
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.folder_listing import forget_listings
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.tools._context import nextcloud_for

__all__ = [
    "TEXT_TYPES",
    "FileInfo",
    "check_offset",
    "decode_page",
    "file_info",
    "forgets_listings",
    "is_text",
    "payload",
]

TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml")


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def forgets_listings(fn: F) -> F:
    """A tool that changes files: afterwards, whether it succeeded or not, no folder listing
    kept for the caller is used again without reading the folder (`folder_listing`)."""

    @functools.wraps(fn)
    async def changing(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        finally:
            ctx = next((v for v in (*args, *kwargs.values()) if isinstance(v, Context)), None)
            if ctx is not None:
                with contextlib.suppress(Exception):  # the user id is known once a tool ran
                    nc = await nextcloud_for(ctx)
                    forget_listings(nc.answers, await nc.files())

    return changing  # type: ignore[return-value]


def is_text(mime: str, charset: str | None) -> bool:
    return bool(charset) or mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml"))


def decode_page(data: bytes, encoding: str, at_end: bool) -> tuple[str, int, int] | None:
    """Text of a page cut at character boundaries: (text, bytes skipped at the start, bytes used).
    None when the bytes are not text in that encoding."""
    skipped = 0
    if encoding.lower().replace("-", "") == "utf8":
        while skipped < min(3, len(data)) and data[skipped] & 0xC0 == 0x80:
            skipped += 1  # an offset in the middle of a character: start at the next one
    try:  # a charset Python does not know, or a codec that is no text encoding (zlib, base64)
        if not codecs.lookup(encoding)._is_text_encoding:
            return None
        decoder = codecs.getincrementaldecoder(encoding)()
        text = decoder.decode(data[skipped:], final=at_end)
    except (UnicodeError, LookupError):
        return None
    pending = len(decoder.getstate()[0])  # bytes of a character cut by the page end
    return text, skipped, len(data) - pending


def payload(path: str, content: str, encoding: str, content_type: str | None) -> tuple[bytes, str]:
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


def check_offset(path: str, offset: int, size: int | None) -> None:
    """Past the end there is nothing to read: say so (Nextcloud answers 416 with an HTML page)."""
    if size is not None and offset > 0 and offset >= size:
        raise InvalidInput(
            f"offset {offset} is beyond the end of {paths.display(path)}, which is {size} bytes "
            f"(offsets 0 to {max(size - 1, 0)})"
        )


class FileInfo(BaseModel):
    path: str
    name: str
    type: Literal["file", "directory"]
    size: int | None = None
    modified: str | None = Field(default=None, description="ISO 8601 UTC")
    etag: str | None = None
    mime: str | None = None


def file_info(entry: FileEntry) -> FileInfo:
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
