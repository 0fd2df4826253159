"""What CalDAV and CardDAV clients share: requests by server href, multistatus streaming, and
discovery of the user's home. Given the DAV user id (`cloud/user`, asked once per user and process
and, over stdio, already on its way beside the first call), the home is where Nextcloud always
puts it (`calendars/<id>/`, `addressbooks/users/<id>/`: the principal's home-set names exactly
that on 29 and 34), which saves a new process two requests in a row before its first calendar or
contacts answer (ADR 0082). Without it, RFC 5397 discovery: `current-user-principal` at the DAV
root, then the home-set property on the principal (the DAV user id need not be the login name)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from urllib.parse import quote, urlsplit

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, DavResponse, parse_multistatus, xml_escape
from nextcloud_mcp_server.nextcloud.discovery import Discovered
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["MAX_MULTIGET", "WRITE_PRIVILEGES", "XML_HEADERS", "DavHomeClient"]

MAX_MULTIGET = 200

XML_HEADERS = {"Content-Type": "application/xml; charset=utf-8"}
WRITE_PRIVILEGES = frozenset(
    {f"{{{DAV}}}write", f"{{{DAV}}}write-content", f"{{{DAV}}}all", f"{{{DAV}}}bind"}
)
_ETAGS = f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}"><d:prop><d:getetag/></d:prop></d:propfind>'
_PRINCIPAL = (
    f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}">'
    "<d:prop><d:current-user-principal/></d:prop></d:propfind>"
)


class DavHomeClient:
    """A DAV client for one user's home of collections (calendars, address books). Subclasses set
    `HOME_SET` (the home-set property, `{ns}name`), `MULTIGET` (the REPORT that reads objects by
    href, `(namespace, name)`) and `KIND` (used in error messages)."""

    HOME_SET: str
    MULTIGET: tuple[str, str]
    HOME_PATH: str  # below /remote.php/dav/, before the user id: where Nextcloud keeps the home
    KIND: str

    def __init__(
        self,
        http: NextcloudHTTP,
        credential: Credential,
        home_cache: Discovered,
        principal_cache: Discovered | None = None,
        *,
        dav_user: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        self._http = http
        self._credential = credential
        self._home_cache = home_cache
        self._principal_cache = principal_cache if principal_cache is not None else Discovered()
        self._dav_user = dav_user

    @property
    def host(self) -> str:
        return self._http.host

    def _path(self, href: str) -> str:
        """A server href as a request path below the configured base URL."""
        path = urlsplit(href).path
        if self._http.base_path and path.startswith(self._http.base_path + "/"):
            path = path[len(self._http.base_path) :]
        return path

    async def _multistatus(self, method: str, href: str, depth: str, body: str) -> AsyncIterator[DavResponse]:
        async with self._http.stream(
            method,
            self._path(href),
            credential=self._credential,
            headers={**XML_HEADERS, "Depth": depth},
            content=body.encode(),
        ) as response:
            async for item in parse_multistatus(response, self.host):
                yield item

    async def member_etags(self, collection: str) -> dict[str, str]:
        """href -> ETag of the objects directly inside `collection` (one PROPFIND, Depth 1): what
        is there now, without the objects' data."""
        parent = urlsplit(collection).path.rstrip("/") + "/"
        found: dict[str, str] = {}
        async for item in self._multistatus("PROPFIND", collection, "1", _ETAGS):
            path = urlsplit(item.href).path
            name = path[len(parent) :] if path.startswith(parent) else ""
            if name and "/" not in name.rstrip("/") and not path.endswith("/"):
                found[path] = (item.text(f"{{{DAV}}}getetag") or "").strip('"')
        return found

    async def present_members(self, collection: str, hrefs: Collection[str]) -> set[str]:
        """Which of `hrefs` (objects of `collection`) are there now: one multiget REPORT asking
        only their ETags, whatever the collection's size (a listing of a calendar of thousands
        of events would read all their hrefs to find ten)."""
        if not hrefs:
            return set()
        if len(hrefs) > MAX_MULTIGET:
            raise ValueError(f"at most {MAX_MULTIGET} objects at once")
        wanted = {urlsplit(h).path for h in hrefs}
        namespace, report = self.MULTIGET
        body = (
            f'<?xml version="1.0"?><r:{report} xmlns:d="{DAV}" xmlns:r="{namespace}">'
            "<d:prop><d:getetag/></d:prop>"
            + "".join(f"<d:href>{xml_escape(h)}</d:href>" for h in sorted(wanted))
            + f"</r:{report}>"
        )
        found: set[str] = set()
        async for item in self._multistatus("REPORT", collection, "1", body):
            path = urlsplit(item.href).path
            if path in wanted and item.text(f"{{{DAV}}}getetag"):
                found.add(path)
        return found

    async def _first_href(self, href: str, body: str, prop: str) -> str:
        async for item in self._multistatus("PROPFIND", href, "0", body):
            element = item.props.get(prop)
            target = element.findtext(f"{{{DAV}}}href") if element is not None else None
            if target:
                return target.strip()
        raise InvalidResponse(self.host, f"the {self.KIND} server did not say where {prop.split('}')[1]} is")

    async def principal(self) -> str:
        """The user's principal (discovered once per process and user)."""

        async def discover() -> str:
            dav_root = f"{self._http.base_path}/remote.php/dav/"
            return await self._first_href(dav_root, _PRINCIPAL, f"{{{DAV}}}current-user-principal")

        return await self._principal_cache.once(self._credential.user_id, discover)

    async def home(self) -> str:
        """The user's home collection (discovered once per process and user)."""
        namespace, _, name = self.HOME_SET[1:].partition("}")
        body = (
            f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}" xmlns:h="{namespace}">'
            f"<d:prop><h:{name}/></d:prop></d:propfind>"
        )

        async def discover() -> str:
            if self._dav_user is not None:
                user = quote(await self._dav_user(), safe="")
                return f"{self._http.base_path}/remote.php/dav/{self.HOME_PATH}/{user}/"
            home = await self._first_href(await self.principal(), body, self.HOME_SET)
            return home if home.endswith("/") else home + "/"

        return await self._home_cache.once(self._credential.user_id, discover)

    # --- the collections of the home themselves (calendars, address books): docs/ADR/0087

    async def change_collection(self, method: str, href: str, body: str | None = None) -> None:
        """MKCALENDAR, an extended MKCOL (RFC 5689), PROPPATCH or DELETE of one collection of the
        home: `href` must be directly inside the home (the caller checks it), `body` the XML."""
        await self._http.request(
            method,
            self._path(href),
            credential=self._credential,
            headers=XML_HEADERS if body is not None else None,
            content=body.encode() if body is not None else None,
        )
