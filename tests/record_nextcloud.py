"""Record exchanges with the real Nextcloud of the kit into tests/fixtures/nextcloud/ (the format
of its README), for what the double used to emulate by guess: the requests the toolsets send.

    python -m tests.record_nextcloud /var/tmp/some-kit-instance   # an instance just reset

Recorded as `admin` with its app password; the instance URL is written as http://127.0.0.1:8080
(what the contract test substitutes) and cookies are REDACTED. Each sequence starts from the
seed state and runs in order: test_double_contract.py replays them in the same order."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

import httpx

from tests.recordings import FIXTURES

RECORDED_BASE = "http://127.0.0.1:8080"
FILES = "/remote.php/dav/files/admin"
CAL = "/remote.php/dav/calendars/admin"
NOTES = "/index.php/apps/notes/api/v1/notes"
PROPS = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>'
    "<d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><d:getcontentlength/>"
    "<oc:fileid/></d:prop></d:propfind>"
)


def _search(where: str, scope: str = "/files/admin") -> str:
    select = "<d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><d:getcontentlength/>"
    return (
        '<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
        f"<d:basicsearch><d:select><d:prop>{select}</d:prop></d:select>"
        f"<d:from><d:scope><d:href>{scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>"
        f"<d:where>{where}</d:where><d:orderby/><d:limit><d:nresults>50</d:nresults></d:limit>"
        "</d:basicsearch></d:searchrequest>"
    )


def _cmp(op: str, prop: str, literal: str) -> str:
    return f"<d:{op}><d:prop>{prop}</d:prop><d:literal>{literal}</d:literal></d:{op}>"


def _query(component: str, inner: str) -> str:
    return (
        '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
        f'<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="{component}">{inner}'
        "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
    )


WEEKLY = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//rec//EN\r\nBEGIN:VEVENT\r\nUID:weekly-1\r\n"
    "DTSTAMP:20261101T080000Z\r\nDTSTART:20261102T090000Z\r\nDTEND:20261102T093000Z\r\n"
    "RRULE:FREQ=WEEKLY;COUNT=10\r\nSUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
TODO = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//rec//EN\r\nBEGIN:VTODO\r\nUID:todo-1\r\n"
    "DTSTAMP:20261101T080000Z\r\nDUE;VALUE=DATE:20261231\r\nSUMMARY:File taxes\r\nSTATUS:NEEDS-ACTION\r\n"
    "END:VTODO\r\nEND:VCALENDAR\r\n"
)
TASKS_MKCALENDAR = (
    '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
    "<d:displayname>Tasks</d:displayname><c:supported-calendar-component-set>"
    '<c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>'
)
UNICODE = "plan notes é#?.md"


class Recorder:
    def __init__(self, url: str, app_password: str) -> None:
        self.url = url
        # identity: the recorded body is what came over the wire, with no Content-Encoding to undo
        self.client = httpx.Client(
            base_url=url, auth=("admin", app_password), timeout=30, headers={"Accept-Encoding": "identity"}
        )

    def __call__(
        self,
        name: str,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> httpx.Response:
        headers = dict(headers or {})
        response = self.client.request(method, path, headers=headers, content=body)
        lines = [f"### REQUEST: {method} {RECORDED_BASE}{path}"]
        for key, value in headers.items():
            lines += ["### ARG: -H", f"### ARG: {key}: {value.replace(self.url, RECORDED_BASE)}"]
        if body is not None:
            lines += ["### ARG: --data-binary", f"### ARG: {body}"]
        lines += ["### ARG: -u", "### ARG: admin:REDACTED", "### RESPONSE:"]
        lines.append(f"HTTP/1.1 {response.status_code} {response.reason_phrase}")
        for key, value in response.headers.multi_items():
            if key.lower() == "set-cookie":
                value = re.sub(r"^([^=]+)=[^;]*", r"\1=REDACTED", value)
            lines.append(f"{key}: {value}")
        text = "\n".join(lines) + "\n\n" + response.text.replace(self.url, RECORDED_BASE)
        (FIXTURES / f"{name}.txt").write_text(text, encoding="utf-8")
        print(f"{name}: {response.status_code}")
        return response


def record(config: dict[str, str | dict[str, str]]) -> None:
    admin = config["admin"]
    assert isinstance(admin, dict)
    rec = Recorder(str(config["url"]), admin["app_password"])
    depth0, depth1 = {"Depth": "0"}, {"Depth": "1"}
    # files: what the toolset sends (toolsets/files/tools.py, nextcloud/dav/webdav.py)
    rec("toolsets_mkcol_folder", "MKCOL", f"{FILES}/rec")
    rec("toolsets_mkcol_sub", "MKCOL", f"{FILES}/rec/sub")
    rec("toolsets_put_in_sub", "PUT", f"{FILES}/rec/sub/a.txt", body="a")
    folder = rec("toolsets_propfind_folder_depth0", "PROPFIND", f"{FILES}/rec/sub", depth0, PROPS)
    etag = re.search(r"<d:getetag>([^<]*)</d:getetag>", folder.text)
    assert etag
    current = etag.group(1).replace("&quot;", '"')
    rec("toolsets_delete_folder_ifmatch_412", "DELETE", f"{FILES}/rec/sub", {"If-Match": current})
    rec("toolsets_put_file", "PUT", f"{FILES}/rec/file.txt", body="hello")
    rec("toolsets_propfind_file_depth1", "PROPFIND", f"{FILES}/rec/file.txt", depth1, PROPS)
    rec("toolsets_put_unicode", "PUT", f"{FILES}/rec/{quote(UNICODE)}", body="# Plan\n")
    rec("toolsets_propfind_unicode_depth1", "PROPFIND", f"{FILES}/rec", depth1, PROPS)
    rec("toolsets_mkcol_dest", "MKCOL", f"{FILES}/rec/dest")
    rec("toolsets_put_in_dest", "PUT", f"{FILES}/rec/dest/old.txt", body="old")
    dest = {"Destination": f"{rec.url}{FILES}/rec/dest"}
    rec("toolsets_copy_onto_folder_f_412", "COPY", f"{FILES}/rec/sub", {**dest, "Overwrite": "F"})
    rec("toolsets_copy_onto_folder_t", "COPY", f"{FILES}/rec/sub", {**dest, "Overwrite": "T"})
    rec("toolsets_propfind_after_copy", "PROPFIND", f"{FILES}/rec/dest", depth1, PROPS)
    rec("toolsets_move_file_onto_folder_f_412", "MOVE", f"{FILES}/rec/file.txt", {**dest, "Overwrite": "F"})
    rec("toolsets_move_file_onto_folder_t", "MOVE", f"{FILES}/rec/file.txt", {**dest, "Overwrite": "T"})
    rec("toolsets_propfind_after_move", "PROPFIND", f"{FILES}/rec", depth1, PROPS)
    like_md = _cmp("like", "<d:displayname/>", "%.md")
    rec(
        "toolsets_search_name",
        "SEARCH",
        "/remote.php/dav/",
        {"Content-Type": "text/xml; charset=utf-8"},
        _search(like_md),
    )
    mime = _cmp("like", "<d:getcontenttype/>", "text/%")
    rec(
        "toolsets_search_mime_in_folder",
        "SEARCH",
        "/remote.php/dav/",
        {"Content-Type": "text/xml; charset=utf-8"},
        _search(mime, "/files/admin/rec"),
    )
    later = _cmp("gt", "<d:getlastmodified/>", "4102444800")
    rec(
        "toolsets_search_modified_none",
        "SEARCH",
        "/remote.php/dav/",
        {"Content-Type": "text/xml; charset=utf-8"},
        _search(f"<d:and>{like_md}{later}</d:and>"),
    )
    rec(
        "toolsets_search_missing_scope_404",
        "SEARCH",
        "/remote.php/dav/",
        {"Content-Type": "text/xml; charset=utf-8"},
        _search(like_md, "/files/admin/nowhere"),
    )
    rec("toolsets_delete_folder", "DELETE", f"{FILES}/rec/sub")
    # calendar: the REPORTs nextcloud/dav/caldav.py sends (no server-side expansion)
    ics = {"Content-Type": "text/calendar; charset=utf-8"}
    rec("toolsets_caldav_put_weekly", "PUT", f"{CAL}/personal/weekly-1.ics", ics, WEEKLY)
    rec(
        "toolsets_caldav_report_timerange_recurring",
        "REPORT",
        f"{CAL}/personal/",
        depth1,
        _query("VEVENT", '<c:time-range start="20261123T000000Z" end="20261130T000000Z"/>'),
    )
    rec(
        "toolsets_caldav_report_timerange_after_series",
        "REPORT",
        f"{CAL}/personal/",
        depth1,
        _query("VEVENT", '<c:time-range start="20270201T000000Z" end="20270301T000000Z"/>'),
    )
    uid = (
        '<c:prop-filter name="UID"><c:text-match collation="i;octet">weekly-1</c:text-match></c:prop-filter>'
    )
    rec("toolsets_caldav_report_uid", "REPORT", f"{CAL}/personal/", depth1, _query("VEVENT", uid))
    rec("toolsets_caldav_put_todo_in_personal_403", "PUT", f"{CAL}/personal/todo-1.ics", ics, TODO)
    rec("toolsets_caldav_mkcalendar_tasks", "MKCALENDAR", f"{CAL}/tasks/", body=TASKS_MKCALENDAR)
    rec("toolsets_caldav_put_todo", "PUT", f"{CAL}/tasks/todo-1.ics", ics, TODO)
    rec("toolsets_caldav_report_todos", "REPORT", f"{CAL}/tasks/", depth1, _query("VTODO", ""))
    # notes: what toolsets/notes/tools.py relies on
    js = {"Content-Type": "application/json"}
    rec(
        "toolsets_notes_create",
        "POST",
        NOTES,
        js,
        json.dumps({"title": "Plan", "content": "a", "category": "Work"}),
    )
    rec(
        "toolsets_notes_create_same_title",
        "POST",
        NOTES,
        js,
        json.dumps({"title": "Plan", "content": "b", "category": "Work"}),
    )


def record_same_second_etag(rec: Recorder) -> None:
    """A file replaced within the same second keeps its ETag (different size and content): Nextcloud
    29 leaves the file cache's etag as it was, so an If-Match or an approval bound to the ETag
    cannot tell those two versions apart. Not replayed against the double (WsgiDAV changes it)."""
    rec("webdav_same_second_put_first", "PUT", f"{FILES}/same-second.md", body="# Plan\n")
    rec("webdav_same_second_put_second", "PUT", f"{FILES}/same-second.md", body="v2")
    rec("webdav_same_second_propfind", "PROPFIND", f"{FILES}/same-second.md", {"Depth": "0"}, PROPS)


def main(argv: list[str]) -> int:
    config = json.loads((Path(argv[0]) / "nextcloud.json").read_text())
    record(config)
    admin = config["admin"]
    record_same_second_etag(Recorder(str(config["url"]), admin["app_password"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
