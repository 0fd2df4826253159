"""`NextcloudDouble`: one ASGI app laid out like Nextcloud, for integration tests, benchmarks and
`make demo`.

    /status.php                              unauthenticated status
    /ocs/v2.php/cloud/{capabilities,user}    OCS (needs `OCS-APIRequest: true`)
    /ocs/v2.php/search/providers/...         unified search (`search_api.py`)
    /ocs/v2.php/apps/files_sharing/api/v1/shares   OCS Share API (`shares_api.py`)
    /index.php/apps/notes/api/v1/...         Notes API v1, notes kept as files in the WebDAV tree
    /remote.php/dav/files/<user>/...         WsgiDAV
    /remote.php/dav/calendars/<user>/...     Radicale (also answers principal discovery at /remote.php/dav/)
    /remote.php/dav/addressbooks/users/<user>/...   a second Radicale for CardDAV (`contacts_dav.py`)
    /index.php/apps/oauth2/..., /index.php/login/...   the OAuth2 app and Login Flow v2 (`login_api.py`)

Every request is authenticated at this front door; the inner DAV servers see an internal password.
`requests` records what reached the double (method, path, user, scheme, whether a cookie came
along) for tests to assert on. Like Nextcloud, every authenticated answer sets session cookies.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import secrets
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from a2wsgi import WSGIMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from tests.nextcloud_double import contacts_dav, ocs_api, search_api
from tests.nextcloud_double.dav import CALENDARS_PREFIX, FILES_PREFIX, make_radicale, make_wsgidav
from tests.nextcloud_double.dav_extras import (
    CalendarTrash,
    create_calendar,
    search_files,
)
from tests.nextcloud_double.login_api import LoginAPI
from tests.nextcloud_double.notes_api import NotesStore, notes_endpoint
from tests.nextcloud_double.sabre_front import (
    IF_MATCH_FAILED,
    PARENT_NOT_FOUND,
    SabreRules,
    calendar_object,
    calendar_path,
    replay,
    send_whole,
)
from tests.nextcloud_double.sabre_limits import exceeds_instances, index_query
from tests.nextcloud_double.shares_api import SHARES_ENDPOINT, SharesAPI
from tests.nextcloud_double.users import Account, Accounts, Caller

__all__ = ["NextcloudDouble", "Recorded"]

NOTES_PREFIX = "/index.php/apps/notes/api/v1"
Handler = Callable[[Request, Caller], Awaitable[Response]]


@dataclasses.dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    user: str | None
    scheme: str | None
    status: int
    cookie: bool = False  # the request carried a Cookie header
    agent: str | None = None  # its User-Agent


def _session_cookies(user: str, https: bool) -> list[tuple[bytes, bytes]]:
    """What Nextcloud sets on an authenticated answer (see the recordings): a session id, and the
    user's name with the session ones; `secure` only when it was asked over https."""
    session = secrets.token_urlsafe(16)
    flags = "; path=/; HttpOnly" + ("; secure" if https else "")
    return [
        (b"set-cookie", f"oc1double={session}{flags}; SameSite=Lax".encode()),
        (b"set-cookie", f"nc_username={user}{flags}".encode()),
        (b"set-cookie", f"nc_session_id={session}{flags}".encode()),
    ]


class NextcloudDouble(SabreRules):
    def __init__(self, data_dir: Path, accounts: list[Account], *, notes_enabled: bool = True) -> None:
        self.data_dir = data_dir
        self.accounts = Accounts(accounts)
        self.notes_enabled = notes_enabled
        self.notes = NotesStore(data_dir / "files")
        self.files_root = data_dir / "files"
        self._wsgidav = WSGIMiddleware(make_wsgidav(self.files_root, self.accounts), workers=16)
        self._pim_made = threading.Lock()
        self._pim: tuple[WSGIMiddleware, WSGIMiddleware] | None = None  # calendars, contacts
        self.calendar_trash = CalendarTrash(data_dir / "calendars" / "collections" / "collection-root")
        self.requests: collections.deque[Recorded] = collections.deque(maxlen=20_000)
        # the bodies of the REPORTs on calendars, for tests of what is asked (sabre_limits.py)
        self.calendar_reports: collections.deque[bytes] = collections.deque(maxlen=1000)
        # Test hooks: (method, path prefix) -> list of statuses to answer before behaving normally.
        self.injected: dict[tuple[str, str], list[int]] = {}
        self.ocs_routes: dict[tuple[str, str], Handler] = {}
        self.login = LoginAPI(self.accounts)  # Nextcloud's OAuth2 app and Login Flow v2
        self.shares = SharesAPI(self.files_root, self.accounts)
        self._version = "29.0.6"
        # Host names answered (None: any); others get Nextcloud's "Trusted domain error".
        self.trusted_domains: tuple[str, ...] | None = None

    def _calendars_and_contacts(self) -> tuple[WSGIMiddleware, WSGIMiddleware]:
        """The two Radicales (calendars, contacts), made before the first request that may reach
        them, each user with Nextcloud's "Personal" calendar and "Contacts" book: a test that
        never asks for either does not pay for their storage (Radicale probes its folder's file
        system at start, tens of directories made and removed)."""
        with self._pim_made:
            if self._pim is None:
                radicale = make_radicale(self.data_dir / "calendars", self.accounts)
                for account in self.accounts:  # Nextcloud's "Personal" calendar (events only)
                    authorization = self.accounts.inner_authorization(account.id)
                    create_calendar(radicale, account.id, authorization, "personal", "Personal")
                contacts = contacts_dav.make_contacts_radicale(self.data_dir / "contacts", self.accounts)
                self._pim = WSGIMiddleware(radicale, workers=8), WSGIMiddleware(contacts, workers=4)
            return self._pim

    @property
    def _radicale(self) -> WSGIMiddleware:
        return self._calendars_and_contacts()[0]

    @property
    def _contacts(self) -> WSGIMiddleware:
        return self._calendars_and_contacts()[1]

    @property
    def version(self) -> str:
        """The release the double answers as: 29.0.6, or a 34 one where the recordings differ
        (`tests/fixtures/nextcloud34/`); /status.php names it."""
        return self._version

    @version.setter
    def version(self, value: str) -> None:
        self._version = value
        self.shares.newer = value.split(".")[0] >= "30"

    def inject(self, method: str, path_prefix: str, *statuses: int) -> None:
        """Answer the next requests matching `method` and `path_prefix` with these statuses."""
        self.injected.setdefault((method, path_prefix), []).extend(statuses)

    def user_files(self, user: str) -> Path:
        return self.files_root / user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await receive()  # startup
            await send({"type": "lifespan.startup.complete"})
            await receive()  # shutdown
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        caller = self.accounts.authenticate(request.headers.get("authorization"))
        status_holder = {"status": 0}
        recorded = False

        def record() -> None:
            nonlocal recorded
            recorded = True
            self.requests.append(
                Recorded(
                    request.method,
                    scope["path"],
                    caller.user_id if caller else None,
                    caller.scheme if caller else None,
                    status_holder["status"],
                    "cookie" in request.headers,
                    request.headers.get("user-agent"),
                )
            )

        async def recording_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                record()  # before the answer leaves: a client never sees it unrecorded
                if caller is not None:
                    message = {
                        **message,
                        "headers": [
                            *message["headers"],
                            *_session_cookies(caller.user_id, scope["scheme"] == "https"),
                        ],
                    }
            await send(message)

        try:
            injected = self._injected_status(request)
            if injected is not None:
                response: Response | None = Response(status_code=injected, headers={"Retry-After": "0"})
                await response(scope, receive, recording_send)
            else:
                await self._dispatch(scope, receive, recording_send, request, caller)
        finally:
            if not recorded:  # no answer started (the handler failed, or the client went)
                record()

    def _injected_status(self, request: Request) -> int | None:
        for (method, prefix), statuses in self.injected.items():
            if statuses and request.method == method and request.url.path.startswith(prefix):
                return statuses.pop(0)
        return None

    async def _dispatch(
        self, scope: Scope, receive: Receive, send: Send, request: Request, caller: Caller | None
    ) -> None:
        path = scope["path"]
        response: Response | None = None
        host = (request.headers.get("host") or "").rsplit(":", 1)[0]
        if self.trusted_domains is not None and host not in self.trusted_domains:
            # as the real Nextcloud answers (code 15); its other pages are an HTML page saying so
            if path == "/status.php":
                response = JSONResponse({"error": "Trusted domain error.", "code": 15}, status_code=400)
            else:
                response = HTMLResponse("<html><body>Access through untrusted domain</body></html>", 400)
        elif path == "/status.php":
            response = ocs_api.status(self.version)
        elif path in ("/.well-known/caldav", "/.well-known/carddav"):
            response = RedirectResponse("/remote.php/dav/", status_code=301)
        elif path.startswith(NOTES_PREFIX):
            response = await self._notes(request, caller)
        elif path.startswith(("/ocs/v2.php/", "/ocs/v1.php/")):
            response = await self._ocs(request, caller)
        elif path.startswith("/remote.php/dav"):
            if caller is None or caller.scheme not in ("basic", "bearer"):
                response = Response(
                    status_code=401, headers={"WWW-Authenticate": 'Basic realm="Nextcloud", charset="UTF-8"'}
                )
            else:
                await self._dav(scope, receive, send, caller)
                return
        elif path.startswith("/index.php/"):
            response = await self.login.handle(request)
        if response is None:
            response = JSONResponse({"message": "not found"}, status_code=404)
        await response(scope, receive, send)

    async def _notes(self, request: Request, caller: Caller | None) -> Response:
        if not self.notes_enabled:
            # Nextcloud's own page, not the Notes API's JSON (seen on the real Nextcloud 29)
            return HTMLResponse("<!DOCTYPE html><html><head><title>Nextcloud</title></head></html>", 404)
        if request.headers.get("authorization", "").lower().startswith("bearer "):
            # Nextcloud 29's CORS middleware: Bearer tokens are refused on app APIs like Notes.
            return JSONResponse({"message": "CORS requires basic auth"}, status_code=401)
        if caller is None:
            return JSONResponse({"message": ""}, status_code=401)
        return await notes_endpoint(request, self.notes, caller.user_id)

    async def _ocs(self, request: Request, caller: Caller | None) -> Response:
        if request.headers.get("ocs-apirequest", "").lower() != "true":
            return ocs_api.ocs_response(request, [], 401, "CSRF check failed")
        endpoint = request.url.path.split(".php/", 1)[1]
        if caller is None:
            if endpoint == "cloud/capabilities":
                return ocs_api.ocs_response(request, ocs_api.capabilities(self.notes_enabled))
            return ocs_api.ocs_response(request, [], 401, "Current user is not logged in")
        custom = self.ocs_routes.get((request.method, endpoint))
        if custom is not None:
            return await custom(request, caller)
        if endpoint == "cloud/capabilities":
            return ocs_api.ocs_response(request, ocs_api.capabilities(self.notes_enabled))
        if endpoint.startswith("search/providers") and request.method == "GET":
            newer = self.version.split(".")[0] >= "30"
            notes = (
                [(n.id, n.title, n.path.read_text(encoding="utf-8")) for n in self.notes.scan(caller.user_id)]
                if newer
                else []
            )
            return await search_api.search_endpoint(
                request, self.files_root, caller.user_id, endpoint, newer=newer, notes=notes
            )
        if endpoint.startswith(SHARES_ENDPOINT):
            return await self.shares.handle(request, caller.user_id, endpoint)
        if endpoint == "cloud/user":
            return ocs_api.ocs_response(request, ocs_api.cloud_user(self.accounts[caller.user_id]))
        if endpoint == "core/apppassword" and request.method == "DELETE":
            if self.login.delete_app_password(caller.user_id, caller.token):
                return ocs_api.ocs_response(request, [])
            return ocs_api.ocs_response(request, [], 403, "no app password in use")
        return ocs_api.ocs_response(request, [], 404, "Invalid query")

    async def _dav(self, scope: Scope, receive: Receive, send: Send, caller: Caller) -> None:
        path: str = scope["path"]
        method: str = scope["method"]
        headers = [(k, v) for k, v in scope["headers"] if k != b"authorization"]
        headers.append((b"authorization", self.accounts.inner_authorization(caller.user_id).encode()))
        inner = dict(scope, headers=headers)
        if not path.startswith(FILES_PREFIX + "/"):
            self._calendars_and_contacts()  # their folders exist before anything reads them
        calendar = calendar_path(path)
        principal = path.rstrip("/") == f"/remote.php/dav/principals/users/{caller.user_id}"
        if method == "PROPFIND" and (principal or (calendar and not calendar[1])):
            body = await Request(scope, receive).body()
            if b"addressbook-home-set" in body:
                await contacts_dav.address_book_home(path, caller.user_id)(scope, receive, send)
                return
            receive = replay(body)
        if principal:
            await Response(status_code=404)(scope, receive, send)
        elif path.startswith(contacts_dav.ADDRESSBOOKS_PREFIX + "/"):
            await contacts_dav.serve(self._contacts, inner, receive, send)
        elif method == "SEARCH" and path.rstrip("/") == "/remote.php/dav":
            body = await Request(scope, receive).body()
            facts = functools.partial(self.notes.file_facts, caller.user_id)
            await search_files(body, caller.user_id, self.files_root, facts)(scope, receive, send)
        elif method == "DELETE" and self._if_match_on_folder(scope):
            # Nextcloud refuses If-Match on a collection even with its current ETag
            # (toolsets_delete_folder_ifmatch_412.txt); WsgiDAV would delete the folder.
            headers = [(b"content-type", b"application/xml; charset=utf-8")]
            await send_whole(send, 412, headers, IF_MATCH_FAILED)
        elif method == "PUT" and self._parent_missing(scope):
            # Nextcloud answers a PUT into a missing folder with 404 (WsgiDAV: 409)
            headers = [(b"content-type", b"application/xml; charset=utf-8")]
            await send_whole(send, 404, headers, PARENT_NOT_FOUND)
        elif (
            path.startswith(FILES_PREFIX + "/")
            and method in ("MOVE", "COPY")
            and not await self._if_holds(inner)
        ):
            await Response(status_code=412)(scope, receive, send)
        elif path.startswith(FILES_PREFIX + "/"):
            await self._wsgidav(dict(inner, root_path=""), receive, send)
        elif calendar and calendar[0] == caller.user_id and calendar[1] and method == "DELETE":
            await self._delete_calendar(scope, receive, send, inner, calendar[0], calendar[1])
        elif calendar and calendar[0] == caller.user_id and not calendar[1] and method == "PROPFIND":
            await self._home_with_trash(inner, receive, send, caller.user_id)
        elif method == "PUT" and (target := calendar_object(path)) and target[0] == caller.user_id:
            await self._put_calendar_object(inner, receive, send, *target)
        elif path.startswith(CALENDARS_PREFIX) and method == "DELETE":
            await self._delete_object(inner, receive, send)
        elif calendar and calendar[0] == caller.user_id and calendar[1] and method == "REPORT":
            body = await Request(scope, receive).body()
            self.calendar_reports.append(body)
            collection = self.calendar_trash.collections / calendar[0] / calendar[1]
            if exceeds_instances(collection, body):
                await Response("MaxInstancesExceededException", status_code=500)(scope, receive, send)
                return
            rewritten = index_query(collection, path, body)
            if rewritten is not None:
                body = rewritten
                headers = [(k, v) for k, v in inner["headers"] if k.lower() != b"content-length"]
                inner = dict(inner, headers=[*headers, (b"content-length", str(len(body)).encode())])
            await self._radicale(dict(inner, root_path=CALENDARS_PREFIX), replay(body), send)
        elif path.startswith(CALENDARS_PREFIX):
            await self._radicale(dict(inner, root_path=CALENDARS_PREFIX), receive, send)
        elif path.rstrip("/") == "/remote.php/dav":
            # Principal discovery: Radicale's root answers current-user-principal.
            root = dict(inner, root_path=CALENDARS_PREFIX, path=CALENDARS_PREFIX + "/")
            await self._radicale(root, receive, send)
        else:
            await Response(status_code=404)(scope, receive, send)
