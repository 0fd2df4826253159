"""Nextcloud behaviour the inner DAV servers do not have, added at the double's front door:

- every user has a `personal` calendar for events only, as Nextcloud 29 creates one (tasks need a
  calendar of their own, as the Tasks app makes);
- DASL `SEARCH` at `/remote.php/dav/` over the user's files (RFC 5323, the subset Nextcloud
  documents: like/eq/gt/gte/lt/lte on displayname, getcontenttype, getlastmodified, oc:size,
  oc:favorite; and/or/not, is-collection; nresults), with the file ids and favorites the Notes
  API uses (a note's id is its file id, as on Nextcloud);
- a calendar refuses objects without a component it supports (403 InvalidComponentType,
  recorded in `toolsets_caldav_put_todo_in_personal_403.txt`); Radicale takes anything;
- deleting a calendar moves it to a trash bin: it stays in the home's PROPFIND with resourcetype
  `nc:deleted-calendar` (recorded in `caldav_home_after_delete.txt`) until deleted with
  `X-NC-CalDAV-No-Trashbin: 1`.
"""

from __future__ import annotations

import email.utils
import fnmatch
import io
import json
import mimetypes
import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from starlette.responses import Response

from tests.nextcloud_double.dav import file_etag, folder_etag

__all__ = ["CalendarTrash", "create_calendar", "search_files"]

D = "{DAV:}"
OC = "{http://owncloud.org/ns}"


def wsgi_call(app: Callable[..., Any], method: str, script: str, path: str, body: bytes, auth: str) -> int:
    """Call a WSGI app directly (used once per user to set up what Nextcloud would have)."""
    status: list[str] = []
    environ = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": script,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/xml",
        "HTTP_AUTHORIZATION": auth,
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    chunks = app(environ, lambda s, headers, exc_info=None: status.append(s))
    for _ in chunks:
        pass
    return int(status[0].split()[0])


def create_calendar(
    radicale: Callable[..., Any],
    user: str,
    auth: str,
    cal_id: str,
    name: str,
    color: str = "#0082c9",
    components: tuple[str, ...] = ("VEVENT",),
) -> int:
    comps = "".join(f'<c:comp name="{c}"/>' for c in components)
    body = (
        '<?xml version="1.0"?><c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" '
        'xmlns:x1="http://apple.com/ns/ical/"><d:set><d:prop>'
        f"<d:displayname>{escape(name)}</d:displayname><x1:calendar-color>{color}</x1:calendar-color>"
        f"<c:supported-calendar-component-set>{comps}"
        "</c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>"
    )
    return wsgi_call(
        radicale, "MKCALENDAR", "/remote.php/dav/calendars", f"/{user}/{cal_id}/", body.encode(), auth
    )


def missing_component(collections: Path, user: str, cal_id: str, ics: bytes) -> str | None:
    """The component set of calendar `cal_id` when `ics` has none of them (Nextcloud refuses it),
    else None."""
    props_file = collections / user / cal_id / ".Radicale.props"
    if not props_file.is_file():
        return None
    supported = json.loads(props_file.read_text()).get("C:supported-calendar-component-set", "")
    names = [n for n in supported.split(",") if n]
    if not names or any(f"BEGIN:{n}".encode() in ics for n in names):
        return None
    return names[0]


def invalid_component(name: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">\n'
        "  <s:exception>Sabre\\CalDAV\\Exception\\InvalidComponentType</s:exception>\n"
        f"  <s:message>iCalendar objects must at least have a component of type {name}</s:message>\n"
        '  <cal:supported-calendar-component xmlns:cal="urn:ietf:params:xml:ns:caldav"/>\n</d:error>\n'
    ).encode()


class CalendarTrash:
    """Calendars deleted without `X-NC-CalDAV-No-Trashbin`: kept aside and still listed."""

    def __init__(self, collections: Path) -> None:
        self.collections = collections  # Radicale's collection-root
        self.trash = collections.parent / "trash"
        self.deleted: dict[tuple[str, str], str] = {}  # (user, calendar id) -> display name

    def move_to_trash(self, user: str, cal_id: str) -> bool:
        source = self.collections / user / cal_id
        if not source.is_dir():
            return False
        props = source / ".Radicale.props"
        name = cal_id
        if props.exists():
            name = json.loads(props.read_text()).get("D:displayname", cal_id)
        target = self.trash / user / cal_id
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        source.rename(target)
        self.deleted[(user, cal_id)] = name
        return True

    def purge(self, user: str, cal_id: str) -> bool:
        if self.deleted.pop((user, cal_id), None) is None:
            return False
        shutil.rmtree(self.trash / user / cal_id, ignore_errors=True)
        return True

    def listing(self, user: str) -> str:
        """`<d:response>` entries for the user's deleted calendars, shaped like the recording."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return "".join(
            f'<D:response xmlns:D="DAV:">'
            f"<D:href>/remote.php/dav/calendars/{quote(user)}/{quote(cal)}/</D:href>"
            f"<D:propstat><D:prop><D:displayname>{escape(name)}</D:displayname><D:resourcetype><D:collection/>"
            '<x1:deleted-calendar xmlns:x1="http://nextcloud.com/ns"/></D:resourcetype>'
            f'<x1:deleted-at xmlns:x1="http://nextcloud.com/ns">{now}</x1:deleted-at></D:prop>'
            "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
            for (owner, cal), name in self.deleted.items()
            if owner == user
        )


FileFacts = Callable[[Path], tuple[int, bool]]  # a file's id and favorite flag


def _value(entry: Path, prop: str, facts: FileFacts | None = None) -> Any:
    if prop == f"{D}displayname":
        return entry.name
    if prop == f"{D}getcontenttype":
        return "httpd/unix-directory" if entry.is_dir() else mimetypes.guess_type(entry.name)[0] or ""
    if prop == f"{D}getlastmodified":
        return int(entry.stat().st_mtime)
    if prop == f"{OC}size":
        return entry.stat().st_size
    if prop == f"{OC}favorite":
        return int(facts(entry)[1]) if facts is not None else 0
    if prop == f"{OC}fileid":  # Nextcloud 29 and 34 search by it (a note's id is its file's)
        return facts(entry)[0] if facts is not None else entry.stat().st_ino
    raise ValueError(f"unsupported search property {prop}")


def _matches(entry: Path, where: ElementTree.Element, facts: FileFacts | None = None) -> bool:
    op = where.tag.removeprefix(D)
    if op in ("and", "or"):
        results = [_matches(entry, child, facts) for child in where]
        return all(results) if op == "and" else any(results)
    if op == "not":
        return not _matches(entry, where[0], facts)
    if op == "is-collection":
        return entry.is_dir()
    prop_element = where.find(f"{D}prop")
    assert prop_element is not None
    prop = prop_element[0].tag
    literal = where.findtext(f"{D}literal") or ""
    value = _value(entry, prop, facts)
    if op == "like":
        pattern = literal.replace("%", "*").replace("_", "?")
        return fnmatch.fnmatchcase(str(value).lower(), pattern.lower())
    if isinstance(value, int):
        number = int(literal) if literal.isdigit() else int(datetime.fromisoformat(literal).timestamp())
        return {"eq": value == number, "gt": value > number, "gte": value >= number,
                "lt": value < number, "lte": value <= number}[op]  # fmt: skip
    if op == "eq":
        return str(value) == literal
    raise ValueError(f"unsupported operator {op}")


def _etag(entry: Path) -> str:
    """The same ETag WsgiDAV (files) and the double (folders) give in listings."""
    return folder_etag(str(entry)) if entry.is_dir() else file_etag(str(entry))


def search_files(body: bytes, user: str, files_root: Path, facts: FileFacts | None = None) -> Response:
    """Answer a DASL SEARCH for `user` (the scope must be inside the user's own files)."""
    request = ElementTree.fromstring(body)
    basic = request.find(f"{D}basicsearch")
    if basic is None:
        return Response("expected d:basicsearch", status_code=400)
    scope = (basic.findtext(f"{D}from/{D}scope/{D}href") or "").rstrip("/")  # as written, as Nextcloud
    prefix = f"/files/{user}"
    if scope != prefix and not scope.startswith(prefix + "/"):
        return Response("search scope must be inside your own files", status_code=400)
    root = files_root / user
    base = root / scope[len(prefix) :].lstrip("/")
    if not base.is_dir():
        return Response(status_code=404)
    where = basic.find(f"{D}where")
    condition = where[0] if where is not None and len(where) else None
    limit = int(basic.findtext(f"{D}limit/{D}nresults") or 100)
    matches = [p for p in base.rglob("*") if condition is None or _matches(p, condition, facts)]
    matches.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    out = ['<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">']
    for entry in matches[:limit]:
        relative = entry.relative_to(root).as_posix()
        href = f"/remote.php/dav/files/{quote(user)}/{quote(relative)}" + ("/" if entry.is_dir() else "")
        stat = entry.stat()
        kind = "<d:collection/>" if entry.is_dir() else ""
        file_id, favorite = facts(entry) if facts is not None else (stat.st_ino, False)
        length = "" if entry.is_dir() else f"<d:getcontentlength>{stat.st_size}</d:getcontentlength>"
        content_type = escape(_value(entry, f"{D}getcontenttype"))
        mime = "" if entry.is_dir() else f"<d:getcontenttype>{content_type}</d:getcontenttype>"
        out.append(
            f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>"
            f"<d:displayname>{escape(entry.name)}</d:displayname><d:resourcetype>{kind}</d:resourcetype>"
            f"<d:getlastmodified>{email.utils.formatdate(stat.st_mtime, usegmt=True)}</d:getlastmodified>"
            f'<d:getetag>"{_etag(entry)}"</d:getetag>{length}{mime}'
            f"<oc:fileid>{file_id}</oc:fileid><oc:size>{stat.st_size}</oc:size>"
            f"<oc:favorite>{int(favorite)}</oc:favorite>"
            "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
        )
    out.append("</d:multistatus>")
    return Response("".join(out), status_code=207, media_type="application/xml; charset=utf-8")
