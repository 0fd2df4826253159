"""What a PROPFIND or SEARCH of the user's files asks Nextcloud for, and how an answer's entry
becomes a `FileEntry`.

Every property asked for costs Nextcloud work per entry, so each request asks only for what its
caller uses: a listing and a search for what the tools show (`LISTING_PROPS`), `stat` also for
the file id (versions, comments, tags; `STAT_PROPS`), a revalidation for the ETag alone. None of
them asks for what Nextcloud computes per entry from other tables (share types, owner, favorite,
permissions, checksums, has-preview). `oc:size` is a file's length and a folder's total, so
`getcontentlength` is not asked for (it is still read when a server sends it).
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from datetime import UTC, datetime
from xml.etree.ElementTree import Element

from nextcloud_mcp_server.nextcloud import etags, paths
from nextcloud_mcp_server.nextcloud.built_on_read import BuiltOnRead
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, OC, prop_text, read_props
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "ETAG_PROPS",
    "LISTING_PROPS",
    "STAT_PROPS",
    "EntryKey",
    "ListedEntries",
    "Row",
    "ascii_number",
    "entry_at",
    "entry_key",
    "entry_of",
    "http_date",
    "listing_row",
    "propfind_body",
]

LISTING_PROPS = "<d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><oc:size/>"
STAT_PROPS = LISTING_PROPS + "<oc:fileid/>"
ETAG_PROPS = "<d:getetag/><d:resourcetype/>"

_MONTHS = {
    name: i
    for i, name in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}


def propfind_body(props: str) -> bytes:
    namespaces = f'xmlns:d="{DAV}" xmlns:oc="{OC}"'
    return f'<?xml version="1.0"?><d:propfind {namespaces}><d:prop>{props}</d:prop></d:propfind>'.encode()


def http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    parts = value.split()
    # The form Nextcloud sends, `Mon, 23 Nov 2026 18:04:30 GMT`, read directly: email.utils took a
    # tenth of the CPU of listing a folder.
    if len(parts) == 6 and parts[5] == "GMT" and parts[2] in _MONTHS and parts[4].count(":") == 2:
        hour, minute, second = parts[4].split(":")
        try:
            return datetime(
                int(parts[3]),
                _MONTHS[parts[2]],
                int(parts[1]),
                int(hour),
                int(minute),
                int(second),
                tzinfo=UTC,
            )
        except ValueError:
            pass
    try:  # any other form a date takes; one past year 9999 once moved to UTC overflows
        return email.utils.parsedate_to_datetime(value).astimezone(UTC)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


_RESOURCETYPE, _COLLECTION, _MODIFIED, _ETAG, _TYPE, _LENGTH = (
    f"{{{DAV}}}{n}"
    for n in (
        "resourcetype",
        "collection",
        "getlastmodified",
        "getetag",
        "getcontenttype",
        "getcontentlength",
    )
)
_SIZE, _FILEID = f"{{{OC}}}size", f"{{{OC}}}fileid"


# Everything of an answer's entry that `file_entry` reads: href, folder or not, and the texts of
# oc:size, getcontentlength, getlastmodified, getetag, getcontenttype, oc:fileid.
EntryKey = tuple[str, bool, str | None, str | None, str | None, str | None, str | None, str | None]


# where `entry_key` puts each property it reads
_SLOTS = {_RESOURCETYPE: 0, _SIZE: 1, _LENGTH: 2, _MODIFIED: 3, _ETAG: 4, _TYPE: 5, _FILEID: 6}


def entry_key(element: Element) -> EntryKey:
    """What `entry_of` makes an entry from, read straight from a `<d:response>` element (a
    listing reads thousands: `read_props`, ADR 0110). Equal keys (and roots) give equal entries."""
    found: list[Element | None] = [None] * 7
    href = read_props(element, _SLOTS, found)
    kinds, size, length, modified, etag, mime, file_id = found
    return (
        href,
        kinds is not None and kinds.find(_COLLECTION) is not None,
        prop_text(size),
        prop_text(length),
        prop_text(modified),
        prop_text(etag),
        prop_text(mime),
        prop_text(file_id),
    )


def entry_of(key: EntryKey, root: str) -> FileEntry | None:
    """The entry of one `<d:response>` by its key; None for an href outside the files root."""
    path = paths.relative(key[0], root)
    return None if path is None else entry_at(key, path)


def entry_at(key: EntryKey, path: str) -> FileEntry:
    """The entry of one `<d:response>` by its key, at `path` (its href below the files root)."""
    _, is_dir, size, length, modified, etag, mime, file_id = key
    return FileEntry(
        path=path,
        name=path.rpartition("/")[2],
        kind="directory" if is_dir else "file",
        size=ascii_number(size or length),
        modified=http_date(modified),
        etag=etags.plain(etag) or None,
        mime=None if is_dir else mime,
        file_id=ascii_number(file_id),
    )


# One entry of a listing before its `FileEntry` is built: whether it is a file, its name folded,
# its name, its place in the answer, its path and its key. Sorting rows sorts in listing order
# (folders first, then files, each by name case-insensitively, then exactly); the place in the
# answer makes two rows of one name (a server sending an entry twice) never compare further.
Row = tuple[bool, str, str, int, str, EntryKey]


def listing_row(key: EntryKey, path: str, place: int) -> Row:
    name = path.rpartition("/")[2]
    return (not key[1], name.casefold(), name, place, path, key)


class ListedEntries(BuiltOnRead[Row, FileEntry]):
    """A folder's entries in listing order, each built the first time it is read: a page of a
    10,000-entry folder builds its page, not 10,000 entries (ADR 0110). An entry whose key a
    previous listing of the folder had built (`known`) is that entry: Nextcloud sent it exactly
    as before (ADR 0104). Read only from the event loop's thread."""

    __slots__ = ("_known",)

    def __init__(self, rows: list[Row], known: Mapping[EntryKey, FileEntry] | None = None) -> None:
        super().__init__(rows)
        self._known = known or {}

    def _build(self, row: Row) -> FileEntry:
        *_, path, key = row
        return self._known.get(key) or entry_at(key, path)

    def built(self) -> dict[EntryKey, FileEntry]:
        """The entries built so far, by key: what the next listing of the folder reuses."""
        return {
            row[-1]: entry for row, entry in zip(self._rows, self._built, strict=True) if entry is not None
        }
