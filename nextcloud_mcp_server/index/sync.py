"""Reading what changed in a person's Nextcloud into their find index (docs/ADR/0072).

- **Notes**, by their own ETags: one listing without content; the notes whose ETag changed are
  read (one by one when few, in chunks with their content when many); those gone are removed.
- **Files**, by folder ETags: Nextcloud changes a folder's ETag whenever anything below it
  changes, so a folder whose ETag is the one recorded when its whole tree was indexed is skipped
  without a request; an unchanged tree costs one PROPFIND (the root's, Depth 1). A folder's ETag
  is recorded only once everything below it is indexed, so a round cut short by its deadline
  resumes where it stopped. Every file is found by name and path; plain text and Markdown files
  also by their content, at most `max_bytes` of it (a range request: a larger file is never read
  whole); PDF, OOXML and ODF files up to `Limits.max_file_bytes` by the text a bounded process
  extracts from them (`extract.py`, docs/ADR/0075).

Everything runs with the caller's own credential, within a deadline.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from nextcloud_mcp_server.index.engine import MAX_BODY_BYTES, FindIndex, Item
from nextcloud_mcp_server.index.extract import Limits, extract_text, format_of
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.nextcloud.models import FileEntry, Note
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = ["NOTES_FOLDER", "TEXT_SUFFIXES", "Round", "sync_files", "sync_notes"]

TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")
TEXT_MIMES = ("text/plain", "text/markdown", "text/x-markdown")
FOLDER = "folder"  # the marks' source for folders
NOTES_FOLDER = "notes folder"  # the marks' source for where the Notes app keeps notes ("path")
MAX_DEPTH = 64
FEW_NOTES = 20  # changed notes read one by one up to this many, else all in chunks


@dataclass
class Round:
    """What one sync round did, and whether it read everything."""

    deadline: float  # time.monotonic() after which nothing new starts
    complete: bool = True
    read: int = 0  # items (re)indexed
    removed: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)

    def out_of_time(self) -> bool:
        """True once the deadline passed (the round is then incomplete)."""
        if time.monotonic() >= self.deadline:
            self.complete = False
            return True
        return False


def _note_item(note: Note) -> Item:
    return Item(
        "note", str(note.id), note.title, note.category, float(note.modified), note.etag, note.content or ""
    )


async def sync_notes(index: FindIndex, user: str, notes: NotesClient, work: Round) -> None:
    """Bring the user's notes in the index up to date with the Notes app."""
    work.requests += 1
    listed = {n.id: n async for n in notes.iter_notes(exclude=("content",), chunk_size=100_000)}
    indexed = await index.versions(user, "note")
    gone = [key for key in indexed if ascii_number(key) not in listed]
    if gone:
        work.removed += await index.remove(user, "note", gone)
    changed = [n for n in listed.values() if indexed.get(str(n.id)) != n.etag]
    if len(changed) > FEW_NOTES:
        wanted = {n.id for n in changed}
        batch: list[Item] = []
        async for full in notes.iter_notes(chunk_size=100):
            if full.id in wanted:
                batch.append(_note_item(full))
            if len(batch) >= 50:
                await index.put(user, batch)
                work.read, batch = work.read + len(batch), []
                if work.out_of_time():
                    return
        await index.put(user, batch)
        work.read += len(batch)
        return
    for listed_note in changed:
        if work.out_of_time():
            return
        work.requests += 1
        try:
            full = await notes.get(listed_note.id)
        except NextcloudError as exc:
            work.errors.append(f"note {listed_note.id}: {exc}")
            continue
        await index.put(user, [_note_item(full)])
        work.read += 1


def _is_text(entry: FileEntry) -> bool:
    return entry.name.lower().endswith(TEXT_SUFFIXES) or (entry.mime or "").split(";")[0] in TEXT_MIMES


async def _document_text(entry: FileEntry, fmt: str, files: WebDAVClient, limits: Limits, work: Round) -> str:
    size = entry.size or 0
    if size <= 0 or size > limits.max_file_bytes:
        return ""  # empty, or larger than we read: found by name only
    work.requests += 1
    page = await files.read(entry.path, length=limits.max_file_bytes)
    if page.total is not None and page.total > limits.max_file_bytes:
        return ""
    found = await extract_text(fmt, page.data, limits)
    if found.error:
        work.errors.append(f"{entry.path}: {found.error}; found by its name only")
    return found.text


def text_of(data: bytes, charset: str | None, *, cut: bool = False) -> str:
    """A text file's words. Nextcloud says UTF-8 of every text file, whatever was uploaded, and
    UTF-16 (Windows' Notepad) read so was indexed as "Q u a r t e r l y": a byte order mark, or
    NULs in every other byte of the start, say UTF-16; bytes that are not UTF-8 are read as
    Windows-1252 (`cut`: the file goes on past `data`, so a character cut at its end is no sign
    of another charset). Another charset, named, is taken as named."""
    if not charset or charset.lower().replace("-", "") == "utf8":
        head = data[:512]
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            charset = "utf-16"
        elif len(head) >= 4 and head[1::2].count(0) > len(head) // 4 and 0 not in head[0::2]:
            charset = "utf-16-le"
        elif len(head) >= 4 and head[0::2].count(0) > len(head) // 4 and 0 not in head[1::2]:
            charset = "utf-16-be"
        else:
            try:
                codecs.getincrementaldecoder("utf-8")().decode(data, final=not cut)
                charset = "utf-8-sig"
            except UnicodeDecodeError:
                charset = "cp1252"
    try:
        return data.decode(charset, "replace")
    except (LookupError, UnicodeError):  # a charset Python does not know, or no text encoding
        return data.decode("utf-8", "replace")


async def _file_item(entry: FileEntry, files: WebDAVClient, limits: Limits, work: Round) -> Item:
    body = ""
    fmt = format_of(entry.name, entry.mime, ocr=bool(limits.ocr))
    if fmt is not None:
        body = await _document_text(entry, fmt, files, limits, work)
    elif _is_text(entry) and (entry.size or 0) > 0:
        work.requests += 1
        page = await files.read(entry.path, length=limits.max_bytes)
        body = text_of(page.data, page.charset, cut=len(page.data) < (entry.size or 0))
    folder = entry.path.rpartition("/")[0]
    modified = entry.modified.timestamp() if entry.modified else 0.0
    return Item("file", entry.path, entry.name, folder, modified, entry.etag or "", body)


async def sync_files(
    index: FindIndex,
    user: str,
    files: WebDAVClient,
    work: Round,
    *,
    skip: Iterable[str] = (),
    limits: Limits | None = None,
) -> None:
    """Bring the user's files in the index up to date, descending only where ETags changed."""
    marks = await index.marks(user, FOLDER)
    skipped = {s.strip("/") for s in skip if s.strip("/")}
    finished = await _folder(
        index, user, files, work, "", None, marks, skipped, limits or Limits(MAX_BODY_BYTES), 0
    )
    if not finished:  # a folder or file failed: the round is not complete, the next one retries it
        work.complete = False


async def _folder(
    index: FindIndex,
    user: str,
    files: WebDAVClient,
    work: Round,
    path: str,
    known_etag: str | None,
    marks: dict[str, str],
    skipped: set[str],
    limits: Limits,
    depth: int,
) -> bool:
    """Index the folder at `path` and below; True when all of it is indexed (its ETag recorded)."""
    if work.out_of_time():
        return False
    work.requests += 1
    listing = [entry async for entry in files.iter_directory(path, itself=True)]
    own = next((e for e in listing if e.path == path), None)
    etag = (own.etag if own else None) or known_etag
    if etag and marks.get(path) == etag:
        return True  # nothing below changed since it was all indexed
    children = [e for e in listing if e.path != path and e.path not in skipped]
    indexed = await index.versions(user, "file", path)
    present = {e.path for e in children if e.kind == "file"}
    gone = [key for key in indexed if key not in present]
    if gone:
        work.removed += await index.remove(user, "file", gone)
    done = True
    for entry in children:
        if entry.kind == "file" and indexed.get(entry.path) != (entry.etag or ""):
            if work.out_of_time():
                return False
            try:
                await index.put(user, [await _file_item(entry, files, limits, work)])
                work.read += 1
            except NextcloudError as exc:
                work.errors.append(f"{entry.path}: {exc}")
                done = False
    folders = {e.path: e.etag for e in children if e.kind == "directory"}
    for old in [m for m in marks if m and m.rpartition("/")[0] == path and m not in folders]:
        work.removed += await index.remove_below(user, "file", old)  # a folder gone, moved or unshared
        below: dict[str, str | None] = {m: None for m in marks if m == old or m.startswith(old + "/")}
        await index.set_marks(user, FOLDER, below)
        for m in below:
            marks.pop(m, None)
    for folder, folder_etag in folders.items():
        if folder_etag and marks.get(folder) == folder_etag:
            continue
        if depth >= MAX_DEPTH:
            work.errors.append(f"{folder}: deeper than {MAX_DEPTH} folders, not indexed")
            continue
        try:
            finished = await _folder(
                index, user, files, work, folder, folder_etag, marks, skipped, limits, depth + 1
            )
        except NextcloudError as exc:
            work.errors.append(f"{folder}: {exc}")
            finished = False
        done = done and finished
        if not finished and work.out_of_time():
            return False
    if done and etag:
        await index.set_marks(user, FOLDER, {path: etag})
        marks[path] = etag
    return done
