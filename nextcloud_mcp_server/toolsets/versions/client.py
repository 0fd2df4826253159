"""File versions (app files_versions) over DAV: `/remote.php/dav/versions/<user>/versions/<file id>`.

A version is named by its modification time (Unix seconds). On 29 and 34 the listing includes the
current content as the version named by the file's own modification time. Restoring is a MOVE of
a version to `.../restore/target`: the current content becomes a version, so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud.dav.file_apps import (
    DavApp,
    is_collection,
    last_segment,
    xml_request,
)
from nextcloud_mcp_server.nextcloud.dav.files import http_date
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, NC_ORG, DavResponse
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.numbers import ascii_digits, ascii_number

__all__ = ["FileVersion", "VersionsClient", "check_version_id"]

_BODY = xml_request(
    f'<d:propfind xmlns:d="{DAV}" xmlns:nc="{NC_ORG}"><d:prop><d:getlastmodified/><d:getcontentlength/>'
    "<d:getcontenttype/><d:resourcetype/><nc:version-label/><nc:version-author/></d:prop></d:propfind>"
)
MAX_VERSIONS = 10_000  # read at most this many entries of one file's listing


@dataclass(frozen=True)
class FileVersion:
    id: str  # the version's name: its modification time in Unix seconds
    modified: datetime | None
    size: int | None
    mime: str | None
    label: str | None
    author: str | None


def check_version_id(version: str) -> str:
    if not ascii_digits(version):
        raise InvalidInput("a version id is the number listed by nc_versions_list")
    return version


def _version(response: DavResponse) -> FileVersion | None:
    name = last_segment(response.href)
    if not ascii_digits(name) or is_collection(response):  # the file's own collection is named by its id
        return None
    size = response.text(f"{{{DAV}}}getcontentlength")
    return FileVersion(
        id=name,
        modified=http_date(response.text(f"{{{DAV}}}getlastmodified")),
        size=ascii_number(size),
        mime=response.text(f"{{{DAV}}}getcontenttype") or None,
        label=(response.text(f"{{{NC_ORG}}}version-label") or "")[:200] or None,
        author=(response.text(f"{{{NC_ORG}}}version-author") or "")[:200] or None,
    )


class VersionsClient(DavApp):
    def _path(self, *rest: str) -> str:
        return "/".join([f"/remote.php/dav/versions/{self._user}", *(quote(p, safe="") for p in rest)])

    async def list_versions(self, file_id: int) -> list[FileVersion]:
        """Newest first (at most MAX_VERSIONS are read)."""
        found: list[FileVersion] = []
        try:
            async for response in self.multistatus("PROPFIND", self._path("versions", str(file_id)), _BODY):
                version = _version(response)
                if version is not None:
                    found.append(version)
                if len(found) >= MAX_VERSIONS:
                    break
        except NotFound as exc:
            raise NotFound(
                self.host,
                "no versions for this file (the app files_versions may be disabled)",
                status=404,
                body=exc.body,
            ) from None
        found.sort(key=lambda v: int(v.id), reverse=True)
        return found

    async def restore(self, file_id: int, version: str) -> None:
        check_version_id(version)
        destination = self.url(self._path("restore", "target"))
        try:
            await self.send(
                "MOVE", self._path("versions", str(file_id), version), headers={"Destination": destination}
            )
        except NotFound as exc:
            raise NotFound(
                self.host, f"the file has no version {version}", status=404, body=exc.body
            ) from None
