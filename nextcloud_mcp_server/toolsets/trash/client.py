"""The trash bin (app files_trashbin) over DAV: `/remote.php/dav/trashbin/<user>/trash`.

Items are named `<file name>.d<deletion time>`; restoring one is a MOVE to `.../restore/<name>`.
Nextcloud never overwrites on a restore: when the original place is taken it restores under
another name ("a (restored).txt"), and when the original folder is gone it restores into the
root folder (seen on 29 and 34). Emptying is a DELETE of the trash collection.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud.dav.file_apps import (
    DavApp,
    is_collection,
    last_segment,
    one_segment,
    xml_request,
)
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, NC_ORG, OC, DavResponse
from nextcloud_mcp_server.nextcloud.errors import NotFound
from nextcloud_mcp_server.numbers import ascii_number

__all__ = ["TrashClient", "TrashItem", "TrashPage"]

_PROPS = (
    "<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/>"
    "<nc:trashbin-deleted-by-id/><oc:fileid/><oc:size/><d:getcontentlength/><d:resourcetype/>"
)
_BODY = xml_request(
    f'<d:propfind xmlns:d="{DAV}" xmlns:oc="{OC}" xmlns:nc="{NC_ORG}"><d:prop>{_PROPS}</d:prop></d:propfind>'
)
MISSING = "the trash bin (app files_trashbin) is not enabled for you on this Nextcloud"


@dataclass(frozen=True)
class TrashItem:
    name: str  # the item's name in the trash, e.g. 'report.pdf.d1795675634'
    file_name: str
    original_location: str  # path relative to the user's files root, e.g. 'Documents/report.pdf'
    deleted_at: int  # Unix time
    kind: str  # 'file' or 'directory'
    size: int | None
    deleted_by: str | None  # the user id (Nextcloud 28+; None on 29 when it is not known)


@dataclass(frozen=True)
class TrashPage:
    items: list[TrashItem]
    total: int
    total_size: int


def _item(response: DavResponse) -> TrashItem | None:
    name = last_segment(response.href)
    deleted = ascii_number(response.text(f"{{{NC_ORG}}}trashbin-deletion-time"))
    if not name or name == "trash" or deleted is None:
        return None
    size = ascii_number(response.text(f"{{{OC}}}size")) or ascii_number(
        response.text(f"{{{DAV}}}getcontentlength")
    )
    return TrashItem(
        name=name,
        file_name=response.text(f"{{{NC_ORG}}}trashbin-filename") or name,
        original_location=(response.text(f"{{{NC_ORG}}}trashbin-original-location") or "").strip("/"),
        deleted_at=deleted,
        kind="directory" if is_collection(response) else "file",
        size=size,
        deleted_by=response.text(f"{{{NC_ORG}}}trashbin-deleted-by-id") or None,
    )


class TrashClient(DavApp):
    def _path(self, *rest: str) -> str:
        return "/".join([f"/remote.php/dav/trashbin/{self._user}", *(quote(p, safe="") for p in rest)])

    async def list_items(self, *, limit: int, offset: int = 0) -> TrashPage:
        """Newest deletion first. Only `offset + limit` items are kept while the listing streams."""
        keep = offset + limit
        newest: list[tuple[int, str, int, TrashItem]] = []
        total = total_size = 0
        try:
            async for response in self.multistatus("PROPFIND", self._path("trash"), _BODY):
                item = _item(response)
                if item is None:
                    continue
                total += 1
                total_size += item.size or 0
                entry = (item.deleted_at, item.name, total, item)
                if len(newest) < keep:
                    heapq.heappush(newest, entry)
                elif keep:
                    heapq.heappushpop(newest, entry)
        except NotFound as exc:
            raise NotFound(self.host, MISSING, status=404, body=exc.body) from None
        ordered = [entry[3] for entry in sorted(newest, reverse=True)]
        return TrashPage(ordered[offset:keep], total, total_size)

    async def find(self, name: str) -> TrashItem:
        one_segment(name, "trash item name")
        try:
            async for response in self.multistatus("PROPFIND", self._path("trash", name), _BODY, depth="0"):
                item = _item(response)
                if item is not None:
                    return item
        except NotFound:
            pass
        raise NotFound(
            self.host, f"no item named '{name[:200]}' in the trash (list it to see the names)", status=404
        )

    async def restore(self, name: str) -> None:
        one_segment(name, "trash item name")
        destination = self.url(self._path("restore", name))
        await self.send("MOVE", self._path("trash", name), headers={"Destination": destination})

    async def empty(self) -> None:
        await self.send("DELETE", self._path("trash"))
