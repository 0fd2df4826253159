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
from datetime import UTC, datetime
from xml.etree.ElementTree import Element

from nextcloud_mcp_server.nextcloud import etags, paths
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, OC, DavResponse
from nextcloud_mcp_server.nextcloud.models import FileEntry

__all__ = [
    "ETAG_PROPS",
    "LISTING_PROPS",
    "STAT_PROPS",
    "file_entry",
    "http_date",
    "listing_order",
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
    try:
        return email.utils.parsedate_to_datetime(value).astimezone(UTC)
    except (TypeError, ValueError):
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


def _text(props: dict[str, Element], name: str) -> str | None:
    element = props.get(name)
    if element is None:
        return None
    if not len(element):  # a property of plain text, as every one a listing asks for
        return (element.text or "").strip()
    return "".join(element.itertext()).strip()


def _number(text: str | None) -> int | None:
    """A count Nextcloud sent as ASCII digits (at most 20: no size or id is longer); else None."""
    return int(text) if text and len(text) <= 20 and text.isascii() and text.isdigit() else None


def file_entry(item: DavResponse, root: str) -> FileEntry | None:
    """The entry of one `<d:response>`; None for an href outside the user's files root."""
    path = paths.relative(item.href, root)
    if path is None:
        return None
    props = item.props
    kinds = props.get(_RESOURCETYPE)
    is_dir = kinds is not None and any(child.tag == _COLLECTION for child in kinds)
    etag = etags.plain(_text(props, _ETAG))
    return FileEntry(
        path=path,
        name=path.rpartition("/")[2],
        kind="directory" if is_dir else "file",
        size=_number(_text(props, _SIZE) or _text(props, _LENGTH)),
        modified=http_date(_text(props, _MODIFIED)),
        etag=etag or None,
        mime=None if is_dir else _text(props, _TYPE),
        file_id=_number(_text(props, _FILEID)),
    )


def listing_order(entry: FileEntry) -> tuple[bool, str, str]:
    """Folders first, then files, each by name (case-insensitively, then exactly)."""
    return (entry.kind != "directory", entry.name.casefold(), entry.name)
