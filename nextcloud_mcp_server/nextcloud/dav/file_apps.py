"""What the DAV APIs of Nextcloud's file apps (trash bin, versions, system tags, comments) share:
one user's DAV id, requests below `/remote.php/dav/`, multistatus answers read as they stream in.

Names that reach a URL (a trash item, a version) are checked to be one plain path segment first,
so no input can climb out of the collection it names.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Self
from urllib.parse import quote, unquote, urlsplit

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, DavResponse, parse_multistatus
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["DavApp", "is_collection", "last_segment", "one_segment", "xml_request"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_segment(name: str, what: str, *, max_bytes: int = 1024) -> str:
    """`name` when it is a single path segment a URL can carry as it is; InvalidInput otherwise."""
    if not name or name.strip() in (".", "..") or not name.strip():
        raise InvalidInput(f"give a {what}")
    if "/" in name or "\\" in name or _CONTROL.search(name) or "/" in unquote(name):
        raise InvalidInput(f"a {what} is one name, without '/', '\\' or control characters")
    if len(name.encode()) > max_bytes:
        raise InvalidInput(f"a {what} is at most {max_bytes} bytes")
    return name


def last_segment(href: str) -> str:
    """The decoded last segment of a server href ('' for a collection's own href)."""
    return unquote(urlsplit(href).path.rstrip("/").rpartition("/")[2])


def xml_request(body: str) -> bytes:
    return ('<?xml version="1.0" encoding="utf-8"?>' + body).encode()


class DavApp:
    """Requests of one user below `/remote.php/dav/`."""

    def __init__(self, http: NextcloudHTTP, credential: Credential, user_id: str) -> None:
        self._http = http
        self._credential = credential
        self.user_id = user_id
        self._user = quote(user_id, safe="")

    @classmethod
    def of(cls, nextcloud: NextcloudClient, dav_user_id: str) -> Self:
        """The app's client for `nextcloud`'s user (`await nc.dav_api(TrashClient)`)."""
        return cls(nextcloud.http, nextcloud.credential, dav_user_id)

    @property
    def host(self) -> str:
        return self._http.host

    def url(self, path: str) -> str:
        """The absolute URL of a request path (for a `Destination` header)."""
        return self._http.url(path)

    async def multistatus(
        self, method: str, path: str, body: bytes, *, depth: str | None = "1"
    ) -> AsyncIterator[DavResponse]:
        headers = {"Content-Type": "application/xml; charset=utf-8"}
        if depth is not None:
            headers["Depth"] = depth
        async with self._http.stream(
            method, path, credential=self._credential, headers=headers, content=body
        ) as response:
            async for item in parse_multistatus(response, self.host):
                yield item

    async def send(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        json: object = None,
    ) -> str | None:
        """A request whose answer body does not matter; returns its `Content-Location`, if any."""
        answer = await self._http.request(
            method, path, credential=self._credential, headers=headers, json=json
        )
        return answer.headers.get("content-location")


def is_collection(item: DavResponse) -> bool:
    return f"{{{DAV}}}collection" in item.children(f"{{{DAV}}}resourcetype")
