"""System tags (app systemtags) over DAV: `/remote.php/dav/systemtags/` (the tags),
favourites (the `oc:favorite` property of a file, set by PROPPATCH, found by the same REPORT),
`/systemtags-relations/files/<file id>/<tag id>` (PUT tags a file, DELETE untags it), and the
`oc:filter-files` REPORT on the user's files root to find files by tag (paged by Nextcloud with
`d:limit`). A tag the user may not see is not listed; one they may not assign is refused (403).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.file_apps import (
    DavApp,
    is_collection,
    last_segment,
    xml_request,
)
from nextcloud_mcp_server.nextcloud.dav.files import http_date
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, NC_ORG, OC, DavResponse
from nextcloud_mcp_server.nextcloud.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PreconditionFailed,
)
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.numbers import ascii_digits, ascii_number

__all__ = ["SystemTag", "SystemTagsClient", "check_tag_name"]

_TAG_BODY = xml_request(
    f'<d:propfind xmlns:d="{DAV}" xmlns:oc="{OC}"><d:prop><oc:id/><oc:display-name/><oc:user-visible/>'
    "<oc:user-assignable/><oc:can-assign/></d:prop></d:propfind>"
)
MAX_TAGS = 10_000  # tags read from one listing
MAX_NAME = 64  # characters of a tag name (Nextcloud's column holds 64)


@dataclass(frozen=True)
class SystemTag:
    id: int
    name: str
    user_visible: bool
    user_assignable: bool
    can_assign: bool


def check_tag_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise InvalidInput("give a tag name")
    if len(cleaned) > MAX_NAME:
        raise InvalidInput(f"a tag name is at most {MAX_NAME} characters")
    return cleaned


def _flag(response: DavResponse, name: str, default: bool) -> bool:
    text = response.text(f"{{{OC}}}{name}")
    return default if text is None else text == "true"


def _tag(response: DavResponse) -> SystemTag | None:
    tag_id = ascii_number(response.text(f"{{{OC}}}id"))
    if tag_id is None:
        return None
    return SystemTag(
        id=tag_id,
        name=(response.text(f"{{{OC}}}display-name") or "")[: MAX_NAME * 4],
        user_visible=_flag(response, "user-visible", True),
        user_assignable=_flag(response, "user-assignable", True),
        can_assign=_flag(response, "can-assign", True),
    )


class SystemTagsClient(DavApp):
    async def _tags(self, path: str) -> list[SystemTag]:
        found: list[SystemTag] = []
        async for response in self.multistatus("PROPFIND", path, _TAG_BODY):
            tag = _tag(response)
            if tag is not None:
                found.append(tag)
            if len(found) >= MAX_TAGS:
                break
        found.sort(key=lambda t: (t.name.casefold(), t.id))
        return found

    async def list_tags(self) -> list[SystemTag]:
        """The tags this user can see, by name."""
        try:
            return await self._tags("/remote.php/dav/systemtags/")
        except NotFound as exc:
            raise NotFound(
                self.host,
                "system tags (app systemtags) are not enabled on this Nextcloud",
                status=404,
                body=exc.body,
            ) from None

    async def tags_of(self, file_id: int) -> list[SystemTag]:
        return await self._tags(f"/remote.php/dav/systemtags-relations/files/{file_id}")

    async def find(self, name: str) -> SystemTag | None:
        """The tag with this name: exact first, then ignoring case."""
        wanted = check_tag_name(name)
        tags = await self.list_tags()
        exact = [t for t in tags if t.name == wanted]
        loose = [t for t in tags if t.name.casefold() == wanted.casefold()]
        chosen = exact or loose
        return chosen[0] if chosen else None

    async def create(self, name: str) -> SystemTag:
        wanted = check_tag_name(name)
        body = {"name": wanted, "userVisible": True, "userAssignable": True}
        try:
            location = await self.send("POST", "/remote.php/dav/systemtags/", json=body)
        except Conflict as exc:
            raise Conflict(
                self.host,
                f"a tag named '{wanted}' exists but you cannot see or use it",
                status=409,
                body=exc.body,
            ) from None
        except Forbidden as exc:
            raise Forbidden(
                self.host, "this Nextcloud lets only administrators create tags", status=403, body=exc.body
            ) from None
        tag_id = last_segment(location or "")
        if not ascii_digits(tag_id):
            found = await self.find(wanted)
            if found is None:
                raise NotFound(self.host, f"the tag '{wanted}' was created but cannot be found", status=404)
            return found
        return SystemTag(int(tag_id), wanted, True, True, True)

    async def assign(self, file_id: int, tag_id: int) -> bool:
        """Tag a file; False when it already had the tag."""
        try:
            await self.send("PUT", f"/remote.php/dav/systemtags-relations/files/{file_id}/{tag_id}")
        except Conflict:
            return False  # 409: the relation exists already
        except Forbidden as exc:
            raise Forbidden(self.host, "you may not assign this tag", status=403, body=exc.body) from None
        except PreconditionFailed as exc:
            raise NotFound(
                self.host, f"there is no tag with id {tag_id}", status=412, body=exc.body
            ) from None
        return True

    async def unassign(self, file_id: int, tag_id: int) -> None:
        try:
            await self.send("DELETE", f"/remote.php/dav/systemtags-relations/files/{file_id}/{tag_id}")
        except NotFound as exc:
            raise NotFound(self.host, "the file does not have this tag", status=404, body=exc.body) from None
        except Forbidden as exc:
            raise Forbidden(self.host, "you may not remove this tag", status=403, body=exc.body) from None

    def _file_href(self, path: str) -> str:
        return f"/remote.php/dav/files/{quote(self.user_id, safe='')}/{paths.encode(paths.clean(path))}"

    async def set_favorite(self, path: str, *, on: bool) -> bool:
        """Mark the file or folder at `path` a favourite, or not; whether it is one afterwards, as
        Nextcloud reads it again (a PROPPATCH answers 207 even when a property was refused)."""
        body = xml_request(
            f'<d:propertyupdate xmlns:d="{DAV}" xmlns:oc="{OC}"><d:set><d:prop>'
            f"<oc:favorite>{1 if on else 0}</oc:favorite></d:prop></d:set></d:propertyupdate>"
        )
        async for _ in self.multistatus("PROPPATCH", self._file_href(path), body, depth=None):
            pass
        check = xml_request(
            f'<d:propfind xmlns:d="{DAV}" xmlns:oc="{OC}"><d:prop><oc:favorite/></d:prop></d:propfind>'
        )
        async for response in self.multistatus("PROPFIND", self._file_href(path), check, depth="0"):
            return response.text(f"{{{OC}}}favorite") == "1"
        return False

    async def files_with(self, tag_id: int, *, limit: int, offset: int = 0) -> list[FileEntry]:
        """Files and folders of this user with the tag, as Nextcloud pages them."""
        return await self._filtered(f"<oc:systemtag>{tag_id}</oc:systemtag>", limit=limit, offset=offset)

    async def favorites(self, *, limit: int, offset: int = 0) -> list[FileEntry]:
        """This user's favourite files and folders, as Nextcloud pages them."""
        return await self._filtered("<oc:favorite>1</oc:favorite>", limit=limit, offset=offset)

    async def _filtered(self, rule: str, *, limit: int, offset: int) -> list[FileEntry]:
        root = f"{self._http.base_path}/remote.php/dav/files/{self.user_id}"
        body = xml_request(
            f'<oc:filter-files xmlns:d="{DAV}" xmlns:oc="{OC}" xmlns:nc="{NC_ORG}"><d:prop><oc:fileid/>'
            "<d:getlastmodified/><oc:size/><d:resourcetype/><d:getcontenttype/></d:prop>"
            f"<oc:filter-rules>{rule}</oc:filter-rules>"
            f"<d:limit><d:nresults>{limit}</d:nresults><nc:firstresult>{offset}</nc:firstresult></d:limit>"
            "</oc:filter-files>"
        )
        found: list[FileEntry] = []
        path = f"/remote.php/dav/files/{quote(self.user_id, safe='')}/"
        async for response in self.multistatus("REPORT", path, body, depth=None):
            relative = paths.relative(response.href, root)
            if relative is None:
                continue
            size, file_id = response.text(f"{{{OC}}}size"), response.text(f"{{{OC}}}fileid")
            folder = is_collection(response)
            found.append(
                FileEntry(
                    path=relative,
                    name=relative.rpartition("/")[2],
                    kind="directory" if folder else "file",
                    size=ascii_number(size),
                    modified=http_date(response.text(f"{{{DAV}}}getlastmodified")),
                    mime=None if folder else response.text(f"{{{DAV}}}getcontenttype"),
                    file_id=ascii_number(file_id),
                )
            )
            if len(found) >= limit:  # Nextcloud may send more than asked (its own comment says so)
                break
        return found
