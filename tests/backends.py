"""The Nextcloud a test runs against: the double, or the real one from the kit, behind one face.

Toolset tests take the `nextcloud` fixture, which runs each test twice, once per backend, with the
same assertions. State is set up and checked through Nextcloud's own HTTP APIs (WebDAV, Notes,
CalDAV) with plain httpx and the test user's app password - never through our own client, and
never by looking at the double's disk - so a check means the same thing on both.

    async def test_x(nextcloud: Nextcloud) -> None:
        nextcloud.put_file(nextcloud.admin, "a/b.txt", b"hi")
        with running_app(nextcloud.settings()) as base: ...
        assert nextcloud.read_file(nextcloud.admin, "a/b.txt") == b"hi"
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx

from nextcloud_mcp_server.config import Settings, load_settings
from tests.nextcloud_double import NextcloudDouble
from tests.real_nextcloud import Instance
from tests.tls import httpx_verify

__all__ = ["Login", "Nextcloud"]

# How long a test's own request is sent again while the kit's SQLite is locked (see below).
_LOCKED_DEADLINE = 15.0


class _SqliteLockedRetry(httpx.BaseTransport):
    """The kit's Nextcloud keeps its database in SQLite, which refuses a write while another
    request holds the write lock (HTTP 500, "database is locked"): a test setting up or checking
    state beside a running server meets it now and then. A test's own request so refused is sent
    again until it is not, within `_LOCKED_DEADLINE` (not a POST, which may have done part of its
    work); any other answer is returned as it is."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + _LOCKED_DEADLINE
        while True:
            response = self._inner.handle_request(request)
            if response.status_code != 500 or request.method == "POST" or time.monotonic() > deadline:
                return response
            body = response.read()
            if b"database is locked" not in body:
                return response
            response.close()
            time.sleep(0.1)  # between tries, bounded by the deadline above

    def close(self) -> None:
        self._inner.close()


@dataclass(frozen=True)
class Login:
    user: str
    password: str  # the login password (slow on the real server: prefer the app password)
    app_password: str
    display_name: str


@dataclass
class Nextcloud:
    """One Nextcloud under test, with users `admin` and `alice`."""

    kind: Literal["double", "real"]
    url: str
    admin: Login
    alice: Login
    double: NextcloudDouble | None = None
    instance: Instance | None = None

    def __str__(self) -> str:
        return f"{self.kind} Nextcloud {self.version} at {self.url}"

    @property
    def version(self) -> str:
        """The real release ("29.0.6", "34.0.1"), or "double"."""
        return self.instance.version if self.instance is not None else "double"

    @property
    def major(self) -> int:
        """The real release's major version (29, 34); 0 for the double."""
        return int(self.version.split(".")[0]) if self.instance is not None else 0

    # --- configuring the server under test

    def settings(self, login: Login | None = None, **overrides: Any) -> Settings:
        """Single-user settings for `login` (admin by default) with its app password."""
        login = login or self.admin
        wanted = {
            "nextcloud_host": self.url,
            "nextcloud_username": login.user,
            "nextcloud_password": login.app_password,
            **overrides,
        }
        return load_settings(env_file=None, **wanted)

    def server_env(self, login: Login | None = None) -> dict[str, str]:
        """The environment a user would give the server process (as in Claude Desktop's config)."""
        login = login or self.admin
        return {
            "NEXTCLOUD_HOST": self.url,
            "NEXTCLOUD_USERNAME": login.user,
            "NEXTCLOUD_PASSWORD": login.app_password,
        }

    # --- Nextcloud's own APIs, for setting up and checking state

    def http(self, login: Login | None = None) -> httpx.Client:
        login = login or self.admin
        transport: httpx.BaseTransport = httpx.HTTPTransport(verify=httpx_verify())
        if self.instance is not None:
            transport = _SqliteLockedRetry(transport)
        return httpx.Client(
            base_url=self.url,
            auth=(login.user, login.app_password),
            headers={"OCS-APIRequest": "true"},
            timeout=30,
            transport=transport,
        )

    def dav_path(self, login: Login, path: str) -> str:
        encoded = "/".join(quote(s, safe="") for s in path.strip("/").split("/") if s)
        return f"/remote.php/dav/files/{quote(login.user, safe='')}/{encoded}"

    def put_file(self, login: Login, path: str, data: bytes, *, content_type: str | None = None) -> str:
        """Create or replace a file (parents created); return its ETag."""
        parts = path.strip("/").split("/")
        with self.http(login) as client:
            for depth in range(1, len(parts)):
                client.request("MKCOL", self.dav_path(login, "/".join(parts[:depth])))
            headers = {"Content-Type": content_type} if content_type else {}
            response = client.put(self.dav_path(login, path), content=data, headers=headers)
            assert response.status_code in (201, 204), (response.status_code, response.text[:300])
            return (response.headers.get("etag") or response.headers.get("oc-etag") or "").strip('"')

    def etag(self, login: Login, path: str) -> str:
        with self.http(login) as client:
            response = client.request("PROPFIND", self.dav_path(login, path), headers={"Depth": "0"})
        assert response.status_code == 207, (response.status_code, response.text[:300])
        found = re.search(r"<(?:\w+:)?getetag>(?:&quot;|\")?([^<&\"]*)", response.text)
        return found.group(1) if found else ""

    def put_new_version(self, login: Login, path: str, data: bytes) -> None:
        """Replace a file so that Nextcloud sees a new version. A real Nextcloud 29 keeps a file's
        ETag when it is replaced within the same second (webdav_same_second_*.txt), so the write
        is repeated until the ETag differs (at most a few seconds)."""
        before = self.etag(login, path)
        deadline = time.monotonic() + 10
        while True:
            self.put_file(login, path, data)
            if self.etag(login, path) != before:
                return
            assert time.monotonic() < deadline, f"Nextcloud kept the ETag of {path}"

    def make_folder(self, login: Login, path: str) -> None:
        parts = path.strip("/").split("/")
        with self.http(login) as client:
            for depth in range(1, len(parts) + 1):
                client.request("MKCOL", self.dav_path(login, "/".join(parts[:depth])))

    def read_file(self, login: Login, path: str) -> bytes | None:
        """A file's bytes, or None when there is nothing (or a folder) at `path`."""
        with self.http(login) as client:
            response = client.get(self.dav_path(login, path))
        if response.status_code == 404:
            return None
        assert response.status_code == 200, (response.status_code, response.text[:300])
        return response.content

    def exists(self, login: Login, path: str) -> bool:
        with self.http(login) as client:
            response = client.request("PROPFIND", self.dav_path(login, path), headers={"Depth": "0"})
        assert response.status_code in (207, 404), (response.status_code, response.text[:300])
        return response.status_code == 207

    def notes(self, login: Login | None = None) -> list[dict[str, Any]]:
        with self.http(login) as client:
            response = client.get("/index.php/apps/notes/api/v1/notes")
        assert response.status_code == 200, (response.status_code, response.text[:300])
        found: list[dict[str, Any]] = response.json()
        return found

    def add_note(
        self, login: Login | None = None, *, title: str, content: str, category: str = ""
    ) -> dict[str, Any]:
        with self.http(login) as client:
            response = client.post(
                "/index.php/apps/notes/api/v1/notes",
                json={"title": title, "content": content, "category": category},
            )
        assert response.status_code == 200, (response.status_code, response.text[:300])
        note: dict[str, Any] = response.json()
        return note

    def calendar_path(self, login: Login, calendar: str = "personal") -> str:
        return f"/remote.php/dav/calendars/{quote(login.user, safe='')}/{quote(calendar, safe='')}/"

    def remove_sample_events(self) -> None:
        """Nextcloud 34 puts an "Example event - open me!" into each personal calendar at the
        first login, dated a week after that: on the kit, a week after the instance was installed,
        so it would fall into some tests' fixed date ranges on some days. Tests start without it
        (`test_nextcloud_versions.py` meets it)."""
        for login in (self.admin, self.alice):
            for href, ics in self.calendar_objects(login).items():
                if "SUMMARY:Example event - open me!" in ics:
                    with self.http(login) as client:
                        assert client.delete(href).status_code == 204

    def put_calendar_object(self, login: Login, uid: str, ics: str, calendar: str = "personal") -> str:
        """Store a VCALENDAR as `<uid>.ics` (what other apps do); return its ETag."""
        with self.http(login) as client:
            response = client.put(
                self.calendar_path(login, calendar) + quote(uid, safe="") + ".ics",
                content=ics.encode(),
                headers={"Content-Type": "text/calendar; charset=utf-8"},
            )
        assert response.status_code in (201, 204), (response.status_code, response.text[:300])
        return (response.headers.get("etag") or "").strip('"')

    def make_calendar(self, cal_id: str, name: str, login: Login | None = None) -> None:
        """A new calendar (MKCALENDAR) with that id and display name."""
        login = login or self.admin
        body = (
            '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
            f"<d:displayname>{name}</d:displayname></d:prop></d:set></c:mkcalendar>"
        )
        with self.http(login) as client:
            url = f"/remote.php/dav/calendars/{quote(login.user, safe='')}/{cal_id}/"
            assert client.request("MKCALENDAR", url, content=body).status_code == 201

    def calendar_objects(self, login: Login, calendar: str = "personal") -> dict[str, str]:
        """href -> iCalendar text of every object in a calendar."""
        body = (
            '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
            '<d:prop><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"/></c:filter>'
            "</c:calendar-query>"
        )
        import xml.etree.ElementTree as ET  # test helper: the answer comes from our own peer

        with self.http(login) as client:
            response = client.request(
                "REPORT",
                self.calendar_path(login, calendar),
                content=body,
                headers={"Depth": "1", "Content-Type": "application/xml"},
            )
        assert response.status_code == 207, (response.status_code, response.text[:300])
        found = {}
        for item in ET.fromstring(response.content).iter("{DAV:}response"):
            href = item.findtext("{DAV:}href") or ""
            data = item.findtext(".//{urn:ietf:params:xml:ns:caldav}calendar-data") or ""
            found[href] = data
        return found

    # --- groups, shares, contacts (sharing and contacts toolsets)

    def add_group(self, name: str, *members: str) -> None:
        """A group with these members (the kit's seed state has only `admin`)."""
        if self.instance is not None:
            self.instance.occ("group:add", name)
            for member in members:
                self.instance.occ("group:adduser", name, member)
        else:
            assert self.double is not None
            self.double.shares.groups[name] = set(members)

    def shares(self, login: Login | None = None, *, shared_with_me: bool = False) -> list[dict[str, Any]]:
        """The OCS share records `login` made (or received)."""
        params = {"format": "json", **({"shared_with_me": "true"} if shared_with_me else {})}
        with self.http(login) as client:
            response = client.get("/ocs/v2.php/apps/files_sharing/api/v1/shares", params=params)
        assert response.status_code == 200, (response.status_code, response.text[:300])
        found: list[dict[str, Any]] = response.json()["ocs"]["data"]
        return found

    def card_url(self, login: Login, name: str, book: str = "contacts") -> str:
        return (
            f"/remote.php/dav/addressbooks/users/{quote(login.user, safe='')}/{book}/{quote(name, safe='')}"
        )

    def put_card(self, login: Login, name: str, vcard: str, book: str = "contacts") -> str:
        """Store a vCard as `<name>` (what a phone or another app does); return its ETag."""
        with self.http(login) as client:
            response = client.put(
                self.card_url(login, name, book),
                content=vcard.encode(),
                headers={"Content-Type": "text/vcard; charset=utf-8"},
            )
        assert response.status_code in (201, 204), (response.status_code, response.text[:300])
        return (response.headers.get("etag") or "").strip('"')

    def card(self, login: Login, name: str, book: str = "contacts") -> str | None:
        """A card's text as Nextcloud serves it (unfolded), or None when there is none."""
        with self.http(login) as client:
            response = client.get(self.card_url(login, name, book))
        if response.status_code == 404:
            return None
        assert response.status_code == 200, (response.status_code, response.text[:300])
        return response.text.replace("\r\n", "\n").replace("\n ", "")
