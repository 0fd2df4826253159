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


def file_entry(item: DavResponse, root: str) -> FileEntry | None:
    """The entry of one `<d:response>`; None for an href outside the user's files root."""
    path = paths.relative(item.href, root)
    if path is None:
        return None
    is_dir = f"{{{DAV}}}collection" in item.children(f"{{{DAV}}}resourcetype")
    size_text = item.text(f"{{{OC}}}size") or item.text(f"{{{DAV}}}getcontentlength")
    file_id = item.text(f"{{{OC}}}fileid")
    return FileEntry(
        path=path,
        name=path.rpartition("/")[2],
        kind="directory" if is_dir else "file",
        size=int(size_text) if size_text and size_text.isdigit() else None,
        modified=http_date(item.text(f"{{{DAV}}}getlastmodified")),
        etag=etags.plain(item.text(f"{{{DAV}}}getetag")) or None,
        mime=None if is_dir else item.text(f"{{{DAV}}}getcontenttype"),
        file_id=int(file_id) if file_id and file_id.isdigit() else None,
    )


def listing_order(entry: FileEntry) -> tuple[bool, str, str]:
    """Folders first, then files, each by name (case-insensitively, then exactly)."""
    return (entry.kind != "directory", entry.name.casefold(), entry.name)
