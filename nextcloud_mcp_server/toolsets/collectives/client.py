"""The Collectives app: its OCS API (`/ocs/v2.php/apps/collectives/api/v1.0/collectives`, from
Collectives 3.0, which needs Nextcloud 30 or later) for collectives and pages, and WebDAV for a
page's Markdown, which is a file in the user's files (`collectivePath/filePath/fileName`).

Behaviour seen on Nextcloud 34 with Collectives 4.5.0:
- a new collective has one page, its landing page (`parentId` 0, `Readme.md`); a page that gets
  subpages becomes `<title>/Readme.md` (its id stays);
- creating a page under a parent answers the page; a title with `/` is stored with `-`, and a
  taken title is numbered (`Weekly (2)`);
- unknown ids answer 404 with Collectives' own message (`File not found: 999`, `Collective not
  found: 77`); a route Nextcloud does not know answers OCS 998 "Invalid query" (29: 404 with the
  same message): the app is missing, or it is a Collectives before 3.0 (Nextcloud 29's 2.18 has
  only its web page's private API, which wants a browser session and its CSRF token).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, ValidationError

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidInput,
    InvalidResponse,
    NextcloudHTTPError,
    NotFound,
    PreconditionFailed,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.models import FrozenAppModel, UnixTime
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.nextcloud.ocs import OCSClient, ocs_status

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "COLLECTIVES_MISSING",
    "COLLECTIVES_TOO_OLD",
    "Collective",
    "CollectivesClient",
    "CollectivesUnavailable",
    "Page",
    "PageText",
    "check_page_title",
]

API = "apps/collectives/api/v1.0/collectives"
COLLECTIVES_MISSING = (
    "Collectives is not installed or not enabled for you on this Nextcloud; an administrator "
    "enables it under Apps (occ app:enable collectives)"
)
COLLECTIVES_TOO_OLD = (
    "this Nextcloud's Collectives app is older than 3.0 and has no API for other programs (only "
    "its web page's private one); the collectives toolset needs Collectives 3.0 or later, which "
    "needs Nextcloud 30 or later"
)
_MAX_TITLE = 200


class CollectivesUnavailable(NotFound):
    """The Collectives API is not there for this account: the app is missing, or too old."""


class Collective(FrozenAppModel):
    id: int
    name: str
    emoji: str | None = None
    can_edit: bool = Field(default=False, alias="canEdit")


class Page(FrozenAppModel):
    id: int
    title: str
    emoji: str | None = None
    parent_id: int = Field(alias="parentId")
    timestamp: UnixTime = 0
    size: int | None = None  # of its file in bytes; None when Collectives did not say
    file_name: str = Field(alias="fileName")
    file_path: str = Field(default="", alias="filePath")
    collective_path: str = Field(default="", alias="collectivePath")
    subpage_order: list[int] = Field(default_factory=list, alias="subpageOrder")
    last_user_id: str | None = Field(default=None, alias="lastUserId")

    @property
    def file(self) -> str:
        """The page's Markdown file, relative to the user's files root."""
        return "/".join(part for part in (self.collective_path, self.file_path, self.file_name) if part)


class PageText(FrozenAppModel):
    """The start of a page's Markdown: `truncated` when the file is longer than was read."""

    text: str
    etag: str
    size: int
    truncated: bool


def check_page_title(title: str) -> str:
    """A usable page title (it becomes a file name), stripped; raises `InvalidInput`."""
    cleaned = title.strip()
    if not cleaned:
        raise InvalidInput("title must not be empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in cleaned):
        raise InvalidInput("title must be one line without control characters")
    check_visible(cleaned, "title")
    if len(cleaned) > _MAX_TITLE:
        raise InvalidInput(f"title must be at most {_MAX_TITLE} characters (got {len(cleaned)})")
    return cleaned


def _ocs_meta(body: str) -> tuple[int, str]:
    """The OCS status code and message of an error answer's body, or (0, '')."""
    try:
        meta = json.loads(body)["ocs"]["meta"]
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        return 0, ""
    code = ocs_status(meta, 0)
    return (0, "") if code is None else (code, str(meta.get("message") or ""))


class CollectivesClient:
    """Collectives and pages of one user; `files` is that user's WebDAV client."""

    def __init__(self, ocs: OCSClient, files: WebDAVClient) -> None:
        self._ocs = ocs
        self._files = files

    @classmethod
    def of(cls, nextcloud: NextcloudClient, dav_user_id: str) -> Self:
        """Collectives of `nextcloud`'s user: the OCS API, and the pages as files (`nc.dav_api`)."""
        return cls(nextcloud.ocs, WebDAVClient(nextcloud.http, nextcloud.credential, dav_user_id))

    @property
    def host(self) -> str:
        return self._files.host

    async def _call(
        self, method: str, endpoint: str, data: Any = None, *, why: bool = True
    ) -> dict[str, Any]:
        """`why`: when the app is unavailable, ask Nextcloud whether it is missing or too old (one
        request more; the find index's rounds only need to know it is not there)."""
        try:
            body = await self._ocs.request(method, f"{API}{endpoint}", data=data)
        except NextcloudHTTPError as exc:
            code, said = _ocs_meta(exc.body)
            # A route Nextcloud does not know: OCS 998 on 34, 404 "Invalid query" on 29.
            if code == 998 or (exc.status == 404 and (not said or said.startswith("Invalid query"))):
                if not why:
                    raise CollectivesUnavailable(
                        self.host, COLLECTIVES_MISSING, status=404, body=exc.body
                    ) from None
                raise await self._unavailable(exc) from None
            if said and exc.status in (400, 403, 404):
                raise error_for_status(
                    self.host, exc.status, message=f"Collectives says: {said[:300]}"
                ) from None
            raise
        if not isinstance(body, dict):
            raise InvalidResponse(self.host, "the Collectives API answered no object")
        return body

    async def _unavailable(self, exc: NextcloudHTTPError) -> CollectivesUnavailable:
        """Too old when the app is in the user's navigation (it is enabled), else missing."""
        try:
            entries = await self._ocs.request("GET", "core/navigation/apps")
            listed = entries if isinstance(entries, list) else []
            enabled = any(isinstance(e, dict) and e.get("id") == "collectives" for e in listed)
        except NextcloudHTTPError:
            enabled = False
        message = COLLECTIVES_TOO_OLD if enabled else COLLECTIVES_MISSING
        return CollectivesUnavailable(self.host, message, status=404, body=exc.body)

    def _parse(self, cls: type[Any], payload: Any, what: str) -> Any:
        try:
            return cls.model_validate(payload)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or what
            raise InvalidResponse(self.host, f"Collectives answered a malformed {what} ({where})") from None

    async def collectives(self, *, why: bool = True) -> list[Collective]:
        body = await self._call("GET", "", why=why)
        return [self._parse(Collective, c, "collective") for c in _items(body, "collectives", self.host)]

    async def pages(self, collective_id: int) -> list[Page]:
        body = await self._call("GET", f"/{collective_id}/pages")
        return [self._parse(Page, p, "page") for p in _items(body, "pages", self.host)]

    async def page(self, collective_id: int, page_id: int) -> Page:
        body = await self._call("GET", f"/{collective_id}/pages/{page_id}")
        page: Page = self._parse(Page, body.get("page"), "page")
        return page

    async def create_page(self, collective_id: int, parent_id: int, title: str) -> Page:
        body = await self._call("POST", f"/{collective_id}/pages/{parent_id}", {"title": title})
        page: Page = self._parse(Page, body.get("page"), "page")
        return page

    async def create_collective(self, name: str, emoji: str | None) -> Collective:
        """A new collective (and the team behind it) with the caller as its only member; it has its
        landing page. A name taken by a collective or a team is refused by Collectives (400)."""
        body = await self._call("POST", "", {"name": name, "emoji": emoji} if emoji else {"name": name})
        collective: Collective = self._parse(Collective, body.get("collective"), "collective")
        return collective

    async def move_page(
        self, collective_id: int, page_id: int, *, parent_id: int, title: str | None, copy: bool
    ) -> Page:
        """Move (or copy) the page, with its subpages, under `parent_id` of the same collective, first
        among the parent's subpages, renamed to `title` if given; answers the page (the copy)."""
        data: dict[str, Any] = {"parentId": parent_id, "index": 0, "copy": copy}
        if title is not None:
            data["title"] = title
        body = await self._call("PUT", f"/{collective_id}/pages/{page_id}", data)
        page: Page = self._parse(Page, body.get("page"), "page")
        return page

    async def trash_page(self, collective_id: int, page_id: int) -> None:
        """Move the page, with its subpages, to the collective's trash (restorable)."""
        await self._call("DELETE", f"/{collective_id}/pages/{page_id}")

    async def trashed_pages(self, collective_id: int) -> list[Page]:
        """The trashed pages (4.5 answers their paths as null: read as empty)."""
        body = await self._call("GET", f"/{collective_id}/pages/trash")
        return [self._parse(Page, _no_nulls(p), "page") for p in _items(body, "pages", self.host)]

    async def restore_page(self, collective_id: int, page_id: int) -> Page:
        """Bring a trashed page (with its subpages) back where it was; answers the page."""
        body = await self._call("PATCH", f"/{collective_id}/pages/trash/{page_id}")
        page: Page = self._parse(Page, _no_nulls(body.get("page")), "page")
        return page

    def _file(self, page: Page) -> str:
        try:
            return paths.named(page.file)
        except InvalidInput:
            raise InvalidResponse(
                self.host, f"Collectives named an unusable file for page {page.id}"
            ) from None

    async def read(self, page: Page, *, max_bytes: int) -> PageText:
        """The first `max_bytes` of the page's Markdown, with the file's ETag."""
        got = await self._files.read(self._file(page), offset=0, length=max_bytes + 1)
        if not got.etag:
            raise InvalidResponse(self.host, f"Nextcloud gave no ETag for page {page.id}")
        truncated = len(got.data) > max_bytes
        text = got.data[:max_bytes].decode("utf-8", "ignore" if truncated else "replace")
        size = got.total if got.total is not None else len(got.data)
        return PageText(text=text, etag=got.etag, size=size, truncated=truncated)

    async def write(
        self, page: Page, text: str, *, if_match: str | None = None, unmodified_since: int | None = None
    ) -> str:
        """Replace the page's Markdown while its file is still the version `if_match`, or unchanged
        since the second `unmodified_since` (a page just created: Collectives answers its time, not
        its ETag); the new ETag (a 412 raises `PreconditionFailed`: nothing was written)."""
        if if_match is None and unmodified_since is None:
            raise InvalidInput("a page is written only against the version that was read")
        written = await self._files.write(
            self._file(page),
            text.encode("utf-8"),
            content_type="text/markdown",
            if_match=if_match,
            unmodified_since=unmodified_since,
        )
        return written.etag or ""

    async def write_new(self, page: Page, text: str) -> str:
        """The first text of a page just made, unless its file changed after the second Collectives
        answered (its answer has no ETag). Refused (412) though still empty, as a file written in
        a later second than Collectives said would be: written against the ETag read then."""
        try:
            return await self.write(page, text, unmodified_since=page.timestamp)
        except PreconditionFailed:
            now = await self.read(page, max_bytes=0)
            if now.size:
                raise
            return await self.write(page, text, if_match=now.etag)


def _no_nulls(item: Any) -> Any:
    return {k: v for k, v in item.items() if v is not None} if isinstance(item, dict) else item


def _items(body: dict[str, Any], key: str, host: str) -> list[Any]:
    items = body.get(key)
    if not isinstance(items, list):
        raise InvalidResponse(host, f"the Collectives API answered no list of {key}")
    return items
