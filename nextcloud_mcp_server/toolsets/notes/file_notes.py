"""Which files of the notes folder are notes, and what they hold: a file found by SEARCH as a
`Note`, a file's bytes as the note's text, the folder's zip as every note's text (bounded)."""

from __future__ import annotations

import io
import zipfile
from email.utils import parsedate_to_datetime

from nextcloud_mcp_server.nextcloud.dav.xml import DAV, OC, DavResponse
from nextcloud_mcp_server.nextcloud.models import LAST_TIMESTAMP, Note

__all__ = [
    "EXTENSIONS",
    "MAX_ZIP_BYTES",
    "NotesFilesUnavailable",
    "is_note_path",
    "note_of",
    "note_text",
    "unzip_notes",
]


EXTENSIONS = frozenset({"txt", "org", "markdown", "md", "note"})


MAX_ZIP_BYTES = 48 * 1024 * 1024  # the whole notes folder as one zip, attachments included


_BOMS = ("\ufeff", "\uffef")


class NotesFilesUnavailable(Exception):
    """Nextcloud cannot answer this way (no SEARCH or zip, or a folder too big); use the API."""


def note_of(relative: str, item: DavResponse, custom: str) -> Note | None:
    """The note a file below the notes folder is, or None when the Notes app would not list it."""
    if not is_note_path(relative, custom):
        return None
    folder, _, name = relative.rpartition("/")
    stem = name.rpartition(".")[0]
    file_id = item.text(f"{{{OC}}}fileid") or ""
    if not file_id.isdigit():
        return None
    try:
        modified = int(parsedate_to_datetime(item.text(f"{{{DAV}}}getlastmodified") or "").timestamp())
    except (TypeError, ValueError):
        modified = 0
    return Note(
        id=int(file_id),
        title=stem,
        category=folder,
        favorite=item.text(f"{{{OC}}}favorite") == "1",
        modified=min(max(modified, 0), LAST_TIMESTAMP),
    )


def note_text(content: bytes) -> str:
    """A note's text as the Notes app gives it: UTF-8 (invalid bytes replaced), no BOM."""
    text = content.decode("utf-8", "replace")
    for bom in _BOMS:
        text = text.replace(bom, "")
    return text


def is_note_path(relative: str, custom: str) -> bool:
    folder, _, name = relative.rpartition("/")
    _, dot, extension = name.rpartition(".")
    hidden = any(part.startswith(".") for part in folder.split("/") if part)
    return bool(dot) and not hidden and (extension.lower() in EXTENSIONS or extension.lower() == custom)


def unzip_notes(body: bytes, custom: str) -> dict[str, str]:
    """The notes' texts in the archive by path below its top folder (the notes folder itself)."""
    texts: dict[str, str] = {}
    unpacked = 0
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        for info in archive.infolist():
            _, _, relative = info.filename.partition("/")
            if info.is_dir() or not is_note_path(relative, custom):
                continue
            unpacked += info.file_size
            if unpacked > MAX_ZIP_BYTES:  # a zip bomb, or attachments: not worth unpacking
                raise NotesFilesUnavailable("the notes folder unpacks to more than the limit")
            texts[relative] = note_text(archive.read(info))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise NotesFilesUnavailable(f"the zip of the notes folder is unreadable: {exc}") from None
    return texts
