"""CalDAV client against the answers of a real Nextcloud (recordings), via http_mock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient, CalendarNotFound
from nextcloud_mcp_server.nextcloud.discovery import Discovered
from nextcloud_mcp_server.nextcloud.errors import PreconditionFailed
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests import http_mock
from tests.recordings import load

BASE = "https://cloud.example.com"
# An e-mail login whose DAV user id is "admin": URLs must come from discovery, not the login.
LOGIN = BasicCredential("admin@example.com", "app-password")
PRINCIPAL_HOME = (
    '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav">'
    "<d:response><d:href>/remote.php/dav/principals/users/admin/</d:href><d:propstat><d:prop>"
    "<cal:calendar-home-set><d:href>/remote.php/dav/calendars/admin/</d:href></cal:calendar-home-set>"
    "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
)


def multistatus(name: str) -> http_mock.Response:
    return http_mock.Response(207, text=load(name).body, headers={"Content-Type": "application/xml"})


@pytest.fixture
async def caldav() -> CalDAVClient:
    http = NextcloudHTTP(BASE, max_retries=0)
    yield CalDAVClient(http, LOGIN, Discovered())  # type: ignore[misc]
    await http.aclose()


def mock_discovery() -> http_mock.Route:
    http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/").mock(
        return_value=multistatus("caldav_principal")
    )
    http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/principals/users/admin/").mock(
        return_value=http_mock.Response(207, text=PRINCIPAL_HOME)
    )
    return http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/calendars/admin/")


@http_mock.mock
async def test_deleted_calendars_inbox_outbox_and_trash_are_not_listed(caldav: CalDAVClient) -> None:
    """The recorded home after a delete holds personal, a deleted calendar, inbox, outbox and
    the trash bin: only 'personal' is a calendar to show."""
    mock_discovery().mock(return_value=multistatus("caldav_home_after_delete"))
    calendars = await caldav.calendars()
    assert [(c.id, c.display_name) for c in calendars] == [("personal", "Personal")]


@http_mock.mock
async def test_calendar_properties_are_read_from_the_recorded_home(caldav: CalDAVClient) -> None:
    """Display name, colour, components and (without a privilege set) writability."""
    home = mock_discovery().mock(return_value=multistatus("caldav_propfind_home"))
    [personal] = await caldav.calendars()
    assert personal.href == "/remote.php/dav/calendars/admin/personal/"
    assert personal.color == "#0082c9"
    assert personal.components == ["VEVENT", "VTODO"]
    assert personal.writable
    assert home.calls[0].request.headers["Depth"] == "1"
    with pytest.raises(CalendarNotFound, match="no calendar 'work'; the calendars are: personal"):
        await caldav.calendar("work")


@http_mock.mock
async def test_discovery_runs_once_per_user(caldav: CalDAVClient) -> None:
    root = http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/").mock(
        return_value=multistatus("caldav_principal")
    )
    http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/principals/users/admin/").mock(
        return_value=http_mock.Response(207, text=PRINCIPAL_HOME)
    )
    http_mock.request("PROPFIND", f"{BASE}/remote.php/dav/calendars/admin/").mock(
        return_value=multistatus("caldav_propfind_home")
    )
    await caldav.calendars()
    await caldav.calendars()
    assert root.call_count == 1


@http_mock.mock
async def test_a_time_range_query_returns_the_recorded_event_with_its_etag(caldav: CalDAVClient) -> None:
    mock_discovery().mock(return_value=multistatus("caldav_propfind_home"))
    report = http_mock.request("REPORT", f"{BASE}/remote.php/dav/calendars/admin/personal/").mock(
        return_value=multistatus("caldav_report_query")
    )
    [personal] = await caldav.calendars()
    start, end = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC)
    [event] = await caldav.query(personal, "VEVENT", start=start, end=end)
    assert event.etag == "10e88f9b8400864d762d11bdfd5f74bc"
    assert "SUMMARY:Test meeting" in event.ics
    body = report.calls[0].request.content.decode()
    assert '<c:time-range start="20250101T000000Z" end="20250201T000000Z"/>' in body


@http_mock.mock
async def test_creating_an_existing_uid_is_refused_as_recorded(caldav: CalDAVClient) -> None:
    """PUT with If-None-Match: * on an existing object: the recorded 412 becomes a clear error."""
    recorded = load("caldav_put_event_again_412")
    href = "/remote.php/dav/calendars/admin/personal/mcp-test-1795312893.ics"
    route = http_mock.put(f"{BASE}{href}").mock(return_value=http_mock.Response(412, text=recorded.body))
    with pytest.raises(PreconditionFailed, match="an object with this uid already exists"):
        await caldav.put(href, recorded.request_body or "", create=True)
    assert route.calls[0].request.headers["If-None-Match"] == "*"


@http_mock.mock
async def test_a_stale_etag_on_update_is_a_conflict(caldav: CalDAVClient) -> None:
    href = "/remote.php/dav/calendars/admin/personal/x.ics"
    route = http_mock.put(f"{BASE}{href}").mock(return_value=http_mock.Response(412))
    with pytest.raises(PreconditionFailed, match="nothing was overwritten"):
        await caldav.put(href, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", etag="old")
    assert route.calls[0].request.headers["If-Match"] == '"old"'


@http_mock.mock
async def test_which_objects_are_there_is_one_multiget_of_just_those(caldav: CalDAVClient) -> None:
    """A hit's confirmation asks the calendar for its objects' ETags only, by href: one REPORT
    whatever the calendar's size. What comes back without an ETag (404) or was not asked is not
    "there"."""
    cal = "/remote.php/dav/calendars/admin/personal/"
    answer = (
        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">'
        f'<d:response><d:href>{cal}a.ics</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag></d:prop>'
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
        f"<d:response><d:href>{cal}b%26c.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>"
        f'<d:response><d:href>{cal}other.ics</d:href><d:propstat><d:prop><d:getetag>"2"</d:getetag></d:prop>'
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    )
    route = http_mock.request("REPORT", f"{BASE}{cal}").mock(
        return_value=http_mock.Response(207, text=answer)
    )
    found = await caldav.present_members(cal, [f"{cal}a.ics", f"{cal}b%26c.ics"])
    assert found == {f"{cal}a.ics"}
    assert route.call_count == 1
    body = route.calls[-1].request.content.decode()
    assert "<r:calendar-multiget" in body
    assert "<d:getetag/>" in body
    assert "calendar-data" not in body
    assert body.count("<d:href>") == 2
    assert f"<d:href>{cal}b%26c.ics</d:href>" in body
