"""The News app's REST API v1-3 (`/index.php/apps/news/api/v1-3`). Knows nothing of MCP.

Seen on the real News 25.3.1 (Nextcloud 29) and 28.7.0 (Nextcloud 34), alike:
- `POST feeds` `{"url", "folderId"}` subscribes and fetches the feed at once, from Nextcloud (a
  feed that cannot be fetched is refused: 404 with News' message; one already subscribed: 409);
- `GET items?type=0|1|2|3&id=&getRead=&batchSize=&offset=` lists articles of a feed (0), a
  folder (1), the starred ones (2) or all (3), newest first; `offset` is the id to page below;
- `POST items/{read,unread,star,unstar}/multiple` `{"itemIds": [...]}` marks articles, and
  ignores ids that are not the caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, field_validator

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["NEWS_MISSING", "Feed", "NewsClient", "NewsFolder", "NewsItem"]

API = "/index.php/apps/news/api/v1-3"
NEWS_MISSING = "News is not installed or not enabled for you on this Nextcloud"


class NewsFolder(AppModel):
    id: int
    name: str = ""

    _plain = field_validator("name", mode="before")(plain_text)


class Feed(AppModel):
    id: int
    url: str = ""
    title: str = ""
    folder_id: int | None = Field(default=None, alias="folderId")
    unread: int = Field(default=0, alias="unreadCount")
    error: str = Field(default="", alias="lastUpdateError")

    _plain = field_validator("url", "title", "error", mode="before")(plain_text)

    @field_validator("unread", mode="before")
    @classmethod
    def _count(cls, value: Any) -> int:
        return value if isinstance(value, int) else 0


class NewsItem(AppModel):
    id: int
    feed_id: int = Field(alias="feedId")
    title: str = ""
    url: str = ""
    author: str = ""
    body: str = ""
    published: int = Field(default=0, alias="pubDate")
    unread: bool = False
    starred: bool = False

    _plain = field_validator("title", "url", "author", "body", mode="before")(plain_text)

    @field_validator("published", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> int:
        return value if isinstance(value, int) else 0


_FOLDERS = TypeAdapter(list[NewsFolder])
_FEEDS = TypeAdapter(list[Feed])
_ITEMS = TypeAdapter(list[NewsItem])


class NewsClient:
    """The News API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._api = AppAPI(http, credential, API, app="News", missing=NEWS_MISSING)

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._api.host

    async def _call(self, method: str, path: str, *, params: Any = None, body: Any = None) -> Any:
        return await self._api.call(method, path, "", params=params, body=body)

    def _parse(self, adapter: TypeAdapter[Any], payload: Any, key: str) -> Any:
        return self._api.parse(adapter, payload.get(key) if isinstance(payload, dict) else None, f"its {key}")

    async def folders(self) -> list[NewsFolder]:
        found: list[NewsFolder] = self._parse(_FOLDERS, await self._call("GET", "/folders"), "folders")
        return found

    async def add_folder(self, name: str) -> NewsFolder:
        found: list[NewsFolder] = self._parse(
            _FOLDERS, await self._call("POST", "/folders", body={"name": name}), "folders"
        )
        if not found:
            raise InvalidResponse(self.host, "News did not answer the new folder")
        return found[0]

    async def delete_folder(self, folder_id: int) -> None:
        await self._call("DELETE", f"/folders/{folder_id}")

    async def feeds(self) -> list[Feed]:
        found: list[Feed] = self._parse(_FEEDS, await self._call("GET", "/feeds"), "feeds")
        return found

    async def add_feed(self, url: str, folder_id: int | None) -> Feed:
        body = {"url": url, "folderId": folder_id}
        found: list[Feed] = self._parse(_FEEDS, await self._call("POST", "/feeds", body=body), "feeds")
        if not found:
            raise InvalidResponse(self.host, "News did not answer the new feed")
        return found[0]

    async def items(self, kind: int, of: int, *, unread_only: bool, limit: int, below: int) -> list[NewsItem]:
        params = {
            "type": kind,
            "id": of,
            "getRead": "false" if unread_only else "true",
            "batchSize": limit,
            "offset": below,
        }
        found: list[NewsItem] = self._parse(_ITEMS, await self._call("GET", "/items", params=params), "items")
        return found

    async def mark(self, action: str, item_ids: list[int]) -> None:
        """`action`: read, unread, star or unstar."""
        await self._call("POST", f"/items/{action}/multiple", body={"itemIds": item_ids})
