"""The Bookmarks app's REST API v2 (`/index.php/apps/bookmarks/public/rest/v2`). Knows nothing of
MCP.

Behaviour seen on the real Bookmarks 14.2.7 (Nextcloud 29) and 16.2.6 (Nextcloud 34), alike:
- answers are `{"status": "success"|"error", "item"|"data": ...}`; an unknown bookmark or folder
  answers 404 with `{"status":"error","data":["Not found"]}`;
- adding a URL that is already bookmarked silently overwrites that bookmark's title and tags
  (the same id comes back), so an add looks the URL up first (`?url=`);
- any text is taken as a URL (`javascript:` too); the caller allows only http and https;
- `lastmodified` (seconds) is a bookmark's only version; the root folder is -1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["BOOKMARKS_MISSING", "ROOT", "Bookmark", "BookmarksClient", "Folder"]

API = "/index.php/apps/bookmarks/public/rest/v2"
BOOKMARKS_MISSING = "Bookmarks is not installed or not enabled for you on this Nextcloud"
ROOT = -1


def _special(exc: NextcloudHTTPError, said: str, what: str) -> NextcloudError | None:
    """Bookmarks says "Not found" of an unknown bookmark or folder (its 404 page says nothing)."""
    return NotFound(exc.host, f"{what} does not exist", status=404) if exc.status == 404 and said else None


class Bookmark(AppModel):
    id: int
    url: str = ""
    target: str = ""
    title: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    folders: list[int] = Field(default_factory=list)
    lastmodified: int = 0
    added: int = 0

    _plain = field_validator("url", "target", "title", "description", mode="before")(plain_text)

    @field_validator("tags", "folders", mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        return value if isinstance(value, list) else []


class Folder(AppModel):
    id: int
    title: str = ""
    parent_folder: int = ROOT
    children: list[Folder] = Field(default_factory=list)

    _plain = field_validator("title", mode="before")(plain_text)


_BOOKMARKS = TypeAdapter(list[Bookmark])
_FOLDERS = TypeAdapter(list[Folder])


class BookmarksClient:
    """The Bookmarks API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._api = AppAPI(
            http,
            credential,
            API,
            app="Bookmarks",
            missing=BOOKMARKS_MISSING,
            words=(("data", 0),),
            special=_special,
        )

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._api.host

    async def _call(
        self, method: str, path: str, what: str, *, params: Any = None, body: Any = None
    ) -> dict[str, Any]:
        return self._api.succeeded(await self._api.call(method, path, what, params=params, body=body), what)

    async def bookmarks(
        self, *, words: list[str], tags: list[str], folder: int | None, url: str | None, page: int, limit: int
    ) -> list[Bookmark]:
        params: list[tuple[str, Any]] = [("page", page), ("limit", limit)]
        params += [("search[]", word) for word in words] + [("tags[]", tag) for tag in tags]
        if folder is not None:
            params.append(("folder", folder))
        if url is not None:
            params.append(("url", url))
        payload = await self._call("GET", "/bookmark", "the bookmarks", params=params)
        try:
            return _BOOKMARKS.validate_python(payload.get("data"))
        except ValidationError:
            raise InvalidResponse(self.host, "Bookmarks' answer is not a list of bookmarks") from None

    async def bookmark(self, bookmark_id: int) -> Bookmark:
        payload = await self._call("GET", f"/bookmark/{bookmark_id}", f"bookmark {bookmark_id}")
        return self._item(payload)

    def _item(self, payload: dict[str, Any]) -> Bookmark:
        try:
            return Bookmark.model_validate(payload.get("item"))
        except ValidationError:
            raise InvalidResponse(self.host, "Bookmarks' answer is not a bookmark") from None

    async def add(self, fields: dict[str, Any]) -> Bookmark:
        return self._item(await self._call("POST", "/bookmark", "the bookmark", body=fields))

    async def replace(self, bookmark: Bookmark, fields: dict[str, Any]) -> Bookmark:
        """Write the bookmark back whole (as read) with `fields` changed."""
        body = {
            "url": bookmark.target or bookmark.url,
            "title": bookmark.title,
            "description": bookmark.description,
            "tags": bookmark.tags,
            "folders": bookmark.folders,
            **fields,
        }
        path = f"/bookmark/{bookmark.id}"
        return self._item(await self._call("PUT", path, f"bookmark {bookmark.id}", body=body))

    async def delete(self, bookmark_id: int) -> None:
        await self._call("DELETE", f"/bookmark/{bookmark_id}", f"bookmark {bookmark_id}")

    async def folders(self) -> list[Folder]:
        """The folder tree under the root."""
        payload = await self._call("GET", "/folder", "the folders")
        try:
            return _FOLDERS.validate_python(payload.get("data"))
        except ValidationError:
            raise InvalidResponse(self.host, "Bookmarks' answer is not a folder tree") from None

    async def tags(self) -> list[str]:
        try:
            answer = await self._api.request("GET", "/tag")
        except NotFound:
            raise NotFound(self.host, BOOKMARKS_MISSING, status=404) from None
        found = json_body(answer, self.host)
        return [tag for tag in found if isinstance(tag, str)] if isinstance(found, list) else []
