"""What Nextcloud's Sabre does in front of the double's inner DAV servers that they do not: a PUT
into a missing folder and an If-Match on a folder refused as Sabre refuses them, RFC 4918 `If`
on a MOVE or COPY checked, a calendar object without its component refused, calendars moved to
Nextcloud's trash bin and listed from it, a DELETE answered 204 without a body. `SabreRules` is
mixed into `NextcloudDouble`, whose front door (`_dav`) calls it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from a2wsgi import WSGIMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from tests.nextcloud_double.dav import CALENDARS_PREFIX, FILES_PREFIX
from tests.nextcloud_double.dav_extras import CalendarTrash, invalid_component, missing_component

__all__ = [
    "IF_MATCH_FAILED",
    "PARENT_NOT_FOUND",
    "SabreRules",
    "calendar_object",
    "calendar_path",
    "replay",
    "send_whole",
]


class SabreRules:
    """Sabre's answers the inner servers lack; needs the double's files root, calendar trash and
    inner servers."""

    files_root: Path
    calendar_trash: CalendarTrash
    _wsgidav: WSGIMiddleware

    @property
    def _radicale(self) -> WSGIMiddleware:
        raise NotImplementedError

    def _parent_missing(self, scope: Scope) -> bool:
        path: str = scope["path"]
        if not path.startswith(FILES_PREFIX + "/"):
            return False
        parts = [unquote(p) for p in path[len(FILES_PREFIX) + 1 :].split("/") if p]
        if len(parts) < 3 or any(p in (".", "..") for p in parts):
            return False
        return not self.files_root.joinpath(*parts[:-1]).is_dir()

    def _if_match_on_folder(self, scope: Scope) -> bool:
        path: str = scope["path"]
        if not path.startswith(FILES_PREFIX + "/") or not any(k == b"if-match" for k, _ in scope["headers"]):
            return False
        parts = [unquote(p) for p in path[len(FILES_PREFIX) + 1 :].split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            return False
        return self.files_root.joinpath(*parts).is_dir()

    async def _put_calendar_object(
        self, inner: Scope, receive: Receive, send: Send, user: str, cal_id: str
    ) -> None:
        body = await Request(inner, receive).body()
        missing = missing_component(self.calendar_trash.collections, user, cal_id, body)
        if missing:
            headers = [(b"content-type", b"application/xml; charset=utf-8")]
            await send_whole(send, 403, headers, invalid_component(missing))
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._radicale(dict(inner, root_path=CALENDARS_PREFIX), replay, send)

    async def _delete_calendar(
        self, scope: Scope, receive: Receive, send: Send, inner: Scope, user: str, cal_id: str
    ) -> None:
        permanent = Request(scope).headers.get("x-nc-caldav-no-trashbin") == "1"
        trash = self.calendar_trash
        if trash.purge(user, cal_id) if permanent else trash.move_to_trash(user, cal_id):
            await Response(status_code=204)(scope, receive, send)
        else:
            await self._delete_object(inner, receive, send)

    async def _if_holds(self, inner: Scope) -> bool:
        """RFC 4918 `If: <url> (["etag"])` on a MOVE/COPY, which Sabre checks and WsgiDAV ignores:
        the tagged resource must exist with that ETag."""
        header = Request(inner).headers.get("if", "")
        tagged = re.fullmatch(r'\s*<([^>]+)>\s*\(\["([^"]*)"\]\)\s*', header)
        if not header:
            return True
        if tagged is None:
            return False
        start: dict[str, Any] = {}

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                start.update(message)

        async def nothing() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        target = urlsplit(tagged.group(1)).path
        head = dict(inner, method="HEAD", path=unquote(target), raw_path=target.encode(), query_string=b"")
        await self._wsgidav(dict(head, root_path=""), nothing, capture)
        etags = [v.decode() for k, v in start.get("headers", []) if k.lower() == b"etag"]
        return start.get("status") == 200 and [e.strip('"') for e in etags] == [tagged.group(2)]

    async def _captured(self, inner: Scope, receive: Receive) -> tuple[int, list[Any], bytes]:
        """Radicale's whole answer (uncompressed), for the front door to adjust."""
        start: dict[str, Any] = {}
        body = bytearray()

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                body.extend(message.get("body", b""))

        plain = [(k, v) for k, v in inner["headers"] if k.lower() != b"accept-encoding"]
        await self._radicale(dict(inner, root_path=CALENDARS_PREFIX, headers=plain), receive, capture)
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        return int(start.get("status", 500)), headers, bytes(body)

    async def _home_with_trash(self, inner: Scope, receive: Receive, send: Send, user: str) -> None:
        """Radicale's answer for the calendar home, with the trashed calendars added."""
        status, headers, text = await self._captured(inner, receive)
        extra = self.calendar_trash.listing(user).encode()
        if status == 207 and extra:
            close = text.rfind(b"</")
            text = text[:close] + extra + text[close:]
        await send_whole(send, status, headers, text)

    async def _delete_object(self, inner: Scope, receive: Receive, send: Send) -> None:
        """Radicale answers a DELETE with 200 and a body; Nextcloud with 204 and none."""
        status, headers, text = await self._captured(inner, receive)
        if status == 200:
            status, text = 204, b""
            headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
        await send_whole(send, status, headers, text)


IF_MATCH_FAILED = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">\n'
    b"  <s:exception>Sabre\\DAV\\Exception\\PreconditionFailed</s:exception>\n"
    b"  <s:message>An If-Match header was specified, but none of the specified ETags matched.</s:message>\n"
    b"  <s:header>If-Match</s:header>\n</d:error>\n"
)


PARENT_NOT_FOUND = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">\n'
    b"  <s:exception>Sabre\\DAV\\Exception\\NotFound</s:exception>\n"
    b"  <s:message>File with name //a folder could not be located</s:message>\n</d:error>\n"
)


def replay(body: bytes) -> Receive:
    """A `receive` that hands out a body already read."""
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def send_whole(send: Send, status: int, headers: list[Any], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def calendar_object(path: str) -> tuple[str, str] | None:
    """(user, calendar id) for /remote.php/dav/calendars/<user>/<calendar>/<object>."""
    if not path.startswith(CALENDARS_PREFIX + "/"):
        return None
    parts = [p for p in path[len(CALENDARS_PREFIX) :].split("/") if p]
    return (parts[0], parts[1]) if len(parts) == 3 else None


def calendar_path(path: str) -> tuple[str, str] | None:
    """(user, calendar id or '') for /remote.php/dav/calendars/<user>/[<calendar>/]."""
    if not path.startswith(CALENDARS_PREFIX + "/"):
        return None
    parts = [p for p in path[len(CALENDARS_PREFIX) :].split("/") if p]
    if len(parts) == 1:
        return parts[0], ""
    if len(parts) == 2:
        return parts[0], parts[1]
    return None
