"""The floor of each measured tool: the cheapest sequence of direct HTTP requests a careful client
would make to Nextcloud for the same answer, on one keep-alive connection with an app password.
Each returns a number the measurement checks against the manifest (so a fast wrong floor cannot
pass either), and its docstring says why nothing cheaper gives the same answer."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import httpx

__all__ = [
    "FLOORS",
    "Floor",
    "calendar_multiget",
    "conditional_notes_304",
    "file_304",
    "folder_etag",
    "forget_cookies",
]

NOTES_API = "/index.php/apps/notes/api/v1"
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
XML = {"Content-Type": "application/xml; charset=utf-8"}

Floor = Callable[[httpx.AsyncClient, str, dict[str, Any]], Awaitable[int]]


def forget_cookies(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """Make `client` keep no cookies: Nextcloud 29 answers 401 to a WebDAV request carrying the
    session cookie an earlier OCS or Notes answer set, beside Basic credentials (no CSRF token);
    a careful direct client sends its app password alone, as this server does. (httpx copies a
    jar given to it, so the jar is emptied after each answer instead.)"""

    async def clear(response: httpx.Response) -> None:
        client.cookies.clear()

    client.event_hooks["response"].append(clear)
    return client


def _ok(response: httpx.Response, *codes: int) -> httpx.Response:
    if response.status_code not in codes:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: HTTP {response.status_code}"
        )
    return response


_NOTE_SUFFIXES = (".md", ".txt")


_ENTRY = re.compile(r"<d:href>([^<]+)</d:href>.*?<d:getlastmodified>([^<]+)</d:getlastmodified>", re.S)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}


def _http_time(value: str) -> tuple[int, ...]:
    """`Mon, 23 Nov 2026 18:04:30 GMT` as a sortable tuple (the only form Nextcloud sends)."""
    _, day, month, year, clock, _ = value.split()
    return (int(year), _MONTHS[month], int(day), *map(int, clock.split(":")))


async def notes_list(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """Newest-first page of 100 plus the total. The Notes API cannot give it cheaply: its chunks
    run oldest first (Helper::getNotesAndCategories sorts by Notes' last update ascending) and
    every listed note costs Nextcloud per-note queries (favorite, share types, path), so a full
    listing without content took 3.0 s at 5,000 notes. Notes are files: one WebDAV SEARCH of the
    notes folder (files only, with only id, name, time and favorite) is answered from Nextcloud's
    file cache in one query; the client counts, sorts and pages locally. Nextcloud is not asked to
    sort (`orderby`): every note is read anyway, and its sort took 50 of 330 ms at 5,000 notes on
    34 (50 of 750 on 29), more than sorting the dates here (a few ms)."""
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" '
        'xmlns:oc="http://owncloud.org/ns"><d:basicsearch><d:select><d:prop><oc:fileid/>'
        "<d:getlastmodified/><oc:favorite/></d:prop></d:select><d:from><d:scope>"
        f"<d:href>/files/{user}/Notes</d:href><d:depth>infinity</d:depth></d:scope></d:from>"
        "<d:where><d:not><d:is-collection/></d:not></d:where>"
        # without a limit Nextcloud answers the first 100 only
        "<d:limit><d:nresults>20000</d:nresults></d:limit></d:basicsearch></d:searchrequest>"
    )
    response = _ok(await c.request("SEARCH", "/remote.php/dav/", content=body, headers=XML), 207)
    notes = [
        (_http_time(modified), href)
        for href, modified in _ENTRY.findall(response.text)
        if href.lower().endswith(_NOTE_SUFFIXES)
    ]
    notes.sort(reverse=True)
    return len(notes) if len(notes[:100]) == 100 else -1


async def notes_search(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """First 20 notes containing the word: Nextcloud's unified-search Notes provider searches
    title, category and content inside Nextcloud and sends only the hits (one request). Notes 6's
    provider sends every hit whatever the limit (100 here), so the client keeps the first 20."""
    params = {"term": "garden", "limit": 20}
    answer = _ok(
        await c.get("/ocs/v2.php/search/providers/notes/search", params=params, headers=OCS), 200
    ).json()
    return min(20, len(answer["ocs"]["data"]["entries"]))


async def note_get(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """One note with content and ETag: the Notes API's GET of that note."""
    note = _ok(await c.get(f"{NOTES_API}/notes/{m['notes']['sample_id']}", headers=OCS), 200).json()
    return int(note["id"])


def _calendar_query(lower: datetime, upper: datetime, component: str = "VEVENT") -> str:
    fmt = "%Y%m%dT%H%M%SZ"
    return (
        '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        '<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
        f'<c:comp-filter name="{component}">'
        f'<c:time-range start="{lower.strftime(fmt)}" end="{upper.strftime(fmt)}"/>'
        "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
    )


# Rules without an end: Nextcloud stores their last occurrence as 2038-01-01 (29 and 34), so a
# range with only a start just before it is answered from its index alone, without parsing any
# object (a prop-filter on RRULE would make it parse every object of the calendar).
_MASTERS_QUERY = (
    '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
    '<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
    '<c:comp-filter name="VEVENT"><c:time-range start="20371231T000000Z"/></c:comp-filter>'
    "</c:comp-filter></c:filter></c:calendar-query>"
)
_CALENDARS = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" '
    'xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:resourcetype/><d:displayname/>'
    "<c:supported-calendar-component-set/><cs:getctag/></d:prop></d:propfind>"
)


async def _calendar_list(c: httpx.AsyncClient, user: str) -> str:
    """Which calendars the user has: a client that knows nothing in advance must ask (one
    PROPFIND depth 1 of the calendar home, with only what tells events and tasks apart)."""
    path = f"/remote.php/dav/calendars/{user}/"
    response = await c.request("PROPFIND", path, content=_CALENDARS, headers={**XML, "Depth": "1"})
    return _ok(response, 207).text


def _hrefs(multistatus: str) -> set[str]:
    return set(re.findall(r"<d:href>([^<]+)</d:href>", multistatus))


async def week_events(c: httpx.AsyncClient, user: str, m: dict[str, Any], week: str) -> int:
    """One week's objects, per event calendar: a calendar-query REPORT with the week's time-range
    (Nextcloud picks the candidates by its first/last-occurrence index and expands the recurring
    ones to check them), plus a REPORT for the recurring masters (prop-filter RRULE defined). The
    second is needed because Nextcloud 34 silently leaves out of a time-range answer any master
    whose expansion passes 3,500 instances before the range (CalDavBackend::calendarQuery catches
    MaxInstancesExceededException and skips the object): a daily event that began ten years ago
    is missing from this week's answer without it. Only a rule without an end gets that far (a
    bounded one of more than 3,500 instances is refused when saved), and those are found by an
    open-ended range (`_MASTERS_QUERY`). The calendars are listed first (`_calendar_list`). The
    client expands the masters itself, as this server does. Returns the number of distinct
    objects read."""
    truth = m["calendar"]["weeks"][week]
    lower, upper = datetime.fromisoformat(truth["start"]), datetime.fromisoformat(truth["end"])
    await _calendar_list(c, user)
    objects: set[str] = set()
    for cal in ("personal", "contact_birthdays"):
        path = f"/remote.php/dav/calendars/{user}/{cal}/"
        headers = {**XML, "Depth": "1"}
        in_range = await c.request("REPORT", path, content=_calendar_query(lower, upper), headers=headers)
        if in_range.status_code == 500:
            # Nextcloud 29 refuses the whole time-range answer (MaxInstancesExceeded) where 34
            # leaves the master out: from the week on, without an end, it answers from its index
            from_week = _calendar_query(lower, upper).replace(
                f' end="{upper.strftime("%Y%m%dT%H%M%SZ")}"', ""
            )
            in_range = await c.request("REPORT", path, content=from_week, headers=headers)
        masters = await c.request("REPORT", path, content=_MASTERS_QUERY, headers=headers)
        objects |= _hrefs(_ok(in_range, 207).text) | _hrefs(_ok(masters, 207).text)
    return len(objects)


async def calendar_multiget(c: httpx.AsyncClient, user: str, hrefs: list[str], cal: str = "personal") -> int:
    """The read bound of a week: the week's own objects plus every recurring master, fetched once
    by calendar-multiget (what an ideal client that knew them would read)."""
    if cal != "personal":
        return 0
    base = f"/remote.php/dav/calendars/{user}/{cal}/"
    body = (
        '<?xml version="1.0"?><c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
        + "".join(f"<d:href>{base}{h}</d:href>" for h in hrefs)
        + "</c:calendar-multiget>"
    )
    response = _ok(await c.request("REPORT", base, content=body, headers={**XML, "Depth": "1"}), 207)
    return response.text.count("<d:response>")


_BOOKS = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>'
# The tool's "any" field: whatever names, reaches or groups a person.
_CARD_PROPERTIES = ("FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "CATEGORIES")


async def contacts_search(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """Contacts whose name, email, phone, organisation or group contains the text, in every
    address book: the books listed (one PROPFIND depth 1: a client does not know them in
    advance), then one CardDAV addressbook-query per book (anyof text-match on those properties,
    limit 26 as the tool's page of 25 plus one). Nextcloud matches the cards and sends the hits."""
    home = f"/remote.php/dav/addressbooks/users/{user}/"
    listing = await c.request("PROPFIND", home, content=_BOOKS, headers={**XML, "Depth": "1"})
    books = [
        href
        for href, kind in re.findall(
            r"<d:href>([^<]+)</d:href>.*?<d:resourcetype>(.*?)</d:resourcetype>", _ok(listing, 207).text, re.S
        )
        if "addressbook" in kind
    ]
    text = m["contacts"]["rare_surname"]
    filters = "".join(
        f'<card:prop-filter name="{name}"><card:text-match collation="i;unicode-casemap" '
        f'match-type="contains">{text}</card:text-match></card:prop-filter>'
        for name in _CARD_PROPERTIES
    )
    body = (
        '<?xml version="1.0"?>'
        '<card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
        f'<d:prop><d:getetag/><card:address-data/></d:prop><card:filter test="anyof">{filters}'
        "</card:filter><card:limit><card:nresults>26</card:nresults></card:limit></card:addressbook-query>"
    )
    found = 0
    for book in books:
        response = await c.request("REPORT", book, content=body, headers={**XML, "Depth": "1"})
        found += _ok(response, 207).text.count("<d:response>")
    return found


_PROPS = "<d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getetag/><d:getcontenttype/><oc:size/>"


async def _propfind(c: httpx.AsyncClient, user: str, folder: str) -> int:
    body = f'<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>{_PROPS}</d:prop></d:propfind>'
    path = f"/remote.php/dav/files/{user}/{folder}/"
    response = _ok(await c.request("PROPFIND", path, content=body, headers={**XML, "Depth": "1"}), 207)
    return len(re.findall(r"<d:response>", response.text)) - 1


async def list_big(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """The folder's entries with name, type, size, last change, etag, MIME type (a sorted page and
    the total need every entry): one PROPFIND depth 1 asking only those properties."""
    return await _propfind(c, user, m["files"]["big_folder"])


async def list_small(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """As for the big folder: one PROPFIND depth 1 with only the shown properties."""
    return await _propfind(c, user, m["files"]["small_folder"])


async def files_search(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """Files whose name contains the text, newest first, first 50: one WebDAV SEARCH (Nextcloud
    queries its file cache; nothing else is read)."""
    body = (
        '<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
        f"<d:basicsearch><d:select><d:prop>{_PROPS}</d:prop></d:select>"
        f"<d:from><d:scope><d:href>/files/{user}</d:href><d:depth>infinity</d:depth></d:scope></d:from>"
        f"<d:where><d:like><d:prop><d:displayname/></d:prop><d:literal>%{m['files']['marker']}%</d:literal></d:like></d:where>"
        "<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>"
        "<d:limit><d:nresults>50</d:nresults></d:limit></d:basicsearch></d:searchrequest>"
    )
    response = _ok(await c.request("SEARCH", "/remote.php/dav/", content=body, headers=XML), 207)
    return response.text.count("<d:response>")


async def unified_search(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """The word across Nextcloud: the providers list (which providers exist is not known in
    advance), then one OCS search per provider the tool asks by default (all but settings),
    10 results each."""
    providers = _ok(await c.get("/ocs/v2.php/search/providers", headers=OCS), 200).json()["ocs"]["data"]
    hits = 0
    for provider in sorted(p["id"] for p in providers):
        if provider == "settings":
            continue
        params = {"term": "garden", "limit": 10}
        answer = await c.get(f"/ocs/v2.php/search/providers/{provider}/search", params=params, headers=OCS)
        if answer.status_code == 200:
            hits += len(answer.json()["ocs"]["data"]["entries"])
    return hits


async def todos(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """Open tasks: one calendar-query REPORT on the task list for VTODOs that are not completed
    (prop-filter on COMPLETED is-not-defined; STATUS is checked locally), after listing the
    calendars to find the task list (`_calendar_list`)."""
    await _calendar_list(c, user)
    body = (
        '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        '<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
        '<c:comp-filter name="VTODO"><c:prop-filter name="COMPLETED"><c:is-not-defined/></c:prop-filter>'
        "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
    )
    path = f"/remote.php/dav/calendars/{user}/tasks/"
    response = _ok(await c.request("REPORT", path, content=body, headers={**XML, "Depth": "1"}), 207)
    return response.text.count("NEEDS-ACTION")


async def conditional_notes_304(c: httpx.AsyncClient, user: str, etag: str) -> int:
    """The cost a repeated unchanged listing is held to: one conditional GET answered 304. The Notes
    API computes the whole listing before it compares the ETag (NotesApiController::index), so
    this 304 saves bytes, not Nextcloud's CPU; `folder_etag` is the cheap question."""
    response = await c.get(
        f"{NOTES_API}/notes", params={"exclude": "content"}, headers={**OCS, "If-None-Match": etag}
    )
    return response.status_code


async def file_304(c: httpx.AsyncClient, user: str, path: str = "welcome.txt") -> int:
    """The cheapest 304 Nextcloud gives: a conditional GET of one small file with its current
    ETag (what "a repeated unchanged listing costs Nextcloud a 304 or less" is held to)."""
    url = f"/remote.php/dav/files/{user}/{path}"
    etag = _ok(await c.head(url), 200).headers.get("ETag", "")
    return (await c.get(url, headers={"If-None-Match": etag})).status_code


async def folder_etag(c: httpx.AsyncClient, user: str, folder: str) -> int:
    """The cheapest "has anything changed below this folder" a client can ask: PROPFIND depth 0
    for the folder's ETag (Nextcloud propagates changes up the tree)."""
    body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
    path = f"/remote.php/dav/files/{user}/{folder}/"
    response = await c.request("PROPFIND", path, content=body, headers={**XML, "Depth": "0"})
    return response.status_code


async def week_this(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """One week around today: see `week_events`."""
    return await week_events(c, user, m, "this_week")


async def week_past(c: httpx.AsyncClient, user: str, m: dict[str, Any]) -> int:
    """One week five years ago: see `week_events`."""
    return await week_events(c, user, m, "five_years_ago")


FLOORS: dict[str, Floor] = {
    "notes_list": notes_list,
    "notes_search": notes_search,
    "note_get": note_get,
    "events_week": week_this,
    "events_week_5y_ago": week_past,
    "availability_week": week_this,
    "contacts_search": contacts_search,
    "list_big_folder": list_big,
    "list_small_folder": list_small,
    "files_search": files_search,
    "unified_search": unified_search,
    "todos": todos,
}
