"""Which files of the notes folder are notes, and what they hold: a file found by SEARCH as a
`Note`, a file's bytes as the note's text, the folder's zip as every note's text (bounded)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from nextcloud_mcp_server.nextcloud.built_on_read import BuiltOnRead
from nextcloud_mcp_server.nextcloud.dav.files import http_date
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, NC_ORG, OC, prop_text, read_props
from nextcloud_mcp_server.nextcloud.models import LAST_TIMESTAMP, Note
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "EXTENSIONS",
    "MAX_ZIP_BYTES",
    "FoundFile",
    "ListedNotes",
    "NoteRow",
    "NotesFilesUnavailable",
    "found_file",
    "is_note_path",
    "note_at",
    "note_row",
    "note_text",
    "unzip_notes",
]


EXTENSIONS = frozenset({"txt", "org", "markdown", "md", "note"})


MAX_ZIP_BYTES = 48 * 1024 * 1024  # the whole notes folder as one zip, attachments included


_BOMS = ("\ufeff", "\uffef")


class NotesFilesUnavailable(Exception):
    """Nextcloud cannot answer this way (no SEARCH or zip, or a folder too big); use the API."""


@dataclass(slots=True)
class FoundFile:
    """What a SEARCH of the notes folder says of one file: the texts of the properties asked
    (None for one not sent)."""

    href: str
    file_id: str | None = None
    modified: str | None = None
    favorite: str | None = None
    etag: str | None = None
    uploaded: str | None = None  # nc:upload_time (Nextcloud 29's SEARCH sends none)


# where `found_file` puts each property it reads
_FOUND = {
    f"{{{OC}}}fileid": 0,
    f"{{{DAV}}}getlastmodified": 1,
    f"{{{OC}}}favorite": 2,
    f"{{{DAV}}}getetag": 3,
    f"{{{NC_ORG}}}upload_time": 4,
}


def found_file(element: Element) -> FoundFile:
    """A SEARCH answer's `<d:response>` as a `FoundFile`, read straight from the element: 5,000
    notes are 5,000 of them (`read_props`, ADR 0110)."""
    found: list[Element | None] = [None] * 5
    href = read_props(element, _FOUND, found)
    file_id, modified, favorite, etag, uploaded = found
    return FoundFile(
        href,
        prop_text(file_id),
        prop_text(modified),
        prop_text(favorite),
        prop_text(etag),
        prop_text(uploaded),
    )


# A note of a listing before its `Note` is built: minus its last change (so that rows sort newest
# first), its id, its path below the notes folder, and whether it is a favorite.
NoteRow = tuple[int, int, str, bool]


def note_row(relative: str, item: FoundFile, custom: str) -> NoteRow | None:
    """The note a file below the notes folder is, or None when the Notes app would not list it."""
    file_id = ascii_number(item.file_id)
    if file_id is None or not is_note_path(relative, custom):
        return None
    changed = http_date(item.modified)
    modified = min(max(int(changed.timestamp()), 0), LAST_TIMESTAMP) if changed is not None else 0
    return (-modified, file_id, relative, item.favorite == "1")


def note_at(row: NoteRow) -> Note:
    minus_modified, file_id, relative, favorite = row
    folder, _, name = relative.rpartition("/")
    return Note(
        id=file_id,
        title=name.rpartition(".")[0],
        category=folder,
        favorite=favorite,
        modified=-minus_modified,
    )


class ListedNotes(BuiltOnRead[NoteRow, Note]):
    """Notes in the order of their rows, each built the first time it is read: a page of a
    5,000-note listing builds its page, not 5,000 notes (as `ListedEntries` for a folder).
    Read only from the event loop's thread."""

    __slots__ = ()

    def _build(self, row: NoteRow) -> Note:
        return note_at(row)

    def in_category(self, category: str) -> ListedNotes:
        """The notes of exactly `category`, in the same order."""
        return ListedNotes([row for row in self._rows if row[2].rpartition("/")[0] == category])


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
