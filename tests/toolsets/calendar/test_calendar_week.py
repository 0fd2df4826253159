"""One week of a calendar of many years (issue 30, ADR 0050): the answer is the one a full read
gives, Nextcloud is asked the week's REPORT and the rules without an end (never the whole
calendar, never a filter that makes it parse every event), and an unchanged calendar is not read
again. Against the double and both real Nextclouds."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import pytest

from nextcloud_mcp_server.nextcloud.dav import ical_read, recurrence
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.targets import cases
from tests.toolsets.calendar.calendar_requests import CalendarRequests
from tests.toolsets.calendar.test_calendar_tools import mkcalendar

pytestmark = pytest.mark.integration


def _vcalendar(*events: str) -> str:
    body = "".join(
        f"BEGIN:VEVENT\r\nDTSTAMP:20150101T000000Z\r\n{e.strip()}\r\nEND:VEVENT\r\n" for e in events
    )
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n"


def _lines(*lines: str) -> str:
    return "\r\n".join(lines)


# uid -> the events of one calendar object
CALENDAR = {
    "in-week": [
        _lines("UID:in-week", "SUMMARY:In the week", "DTSTART:20261124T100000Z", "DTEND:20261124T110000Z")
    ],
    "before": [_lines("UID:before", "SUMMARY:Before", "DTSTART:20261110T100000Z", "DTEND:20261110T110000Z")],
    "after": [_lines("UID:after", "SUMMARY:After", "DTSTART:20261208T100000Z", "DTEND:20261208T110000Z")],
    "old": [
        _lines("UID:old", "SUMMARY:Five years ago", "DTSTART:20211123T100000Z", "DTEND:20211123T110000Z")
    ],
    "all-day": [
        _lines("UID:all-day", "SUMMARY:All day", "DTSTART;VALUE=DATE:20261127", "DTEND;VALUE=DATE:20261128")
    ],
    "berlin": [
        _lines(
            "UID:berlin",
            "SUMMARY:Berlin",
            "DTSTART;TZID=Europe/Berlin:20261125T090000",
            "DTEND;TZID=Europe/Berlin:20261125T100000",
        )
    ],
    # floating: late on the week's Sunday wherever the reader is (Nextcloud indexes it as UTC)
    "floating": [
        _lines("UID:floating", "SUMMARY:Floating", "DTSTART:20261129T230000", "DTEND:20261129T233000")
    ],
    "floating-2021": [
        _lines(
            "UID:floating-2021", "SUMMARY:Floating then", "DTSTART:20211128T230000", "DTEND:20211128T233000"
        )
    ],
    # more than 3500 occurrences before the week: Nextcloud 29 fails a week's REPORT, 34 drops it
    "daily": [
        _lines(
            "UID:daily", "SUMMARY:Stand-up", "DTSTART:20150101T090000Z", "DURATION:PT15M", "RRULE:FREQ=DAILY"
        )
    ],
    "weekly": [
        _lines(
            "UID:weekly",
            "SUMMARY:Weekly",
            "DTSTART:20160104T140000Z",
            "DURATION:PT1H",
            "RRULE:FREQ=WEEKLY;BYDAY=MO,WE",
            "EXDATE:20261123T140000Z",
        ),
        # Monday of the week before, moved into the week
        _lines(
            "UID:weekly",
            "SUMMARY:Weekly (moved in)",
            "RECURRENCE-ID:20261116T140000Z",
            "DTSTART:20261126T160000Z",
            "DURATION:PT1H",
        ),
        # the week's Wednesday, moved out of it
        _lines(
            "UID:weekly",
            "SUMMARY:Weekly (moved out)",
            "RECURRENCE-ID:20261125T140000Z",
            "DTSTART:20261202T160000Z",
            "DURATION:PT1H",
        ),
    ],
    "monthly": [
        _lines(
            "UID:monthly",
            "SUMMARY:Monthly",
            "DTSTART:20170125T120000Z",
            "DURATION:PT1H",
            "RRULE:FREQ=MONTHLY",
        )
    ],
    "ended": [
        _lines(
            "UID:ended",
            "SUMMARY:Ended",
            "DTSTART:20200301T080000Z",
            "DURATION:PT1H",
            "RRULE:FREQ=DAILY;COUNT=5",
        )
    ],
}

WEEKS = [
    ("2026-11-23", "2026-11-30", "UTC"),
    ("2026-11-23", "2026-11-30", "Pacific/Auckland"),
    ("2026-11-23", "2026-11-30", "America/Los_Angeles"),
    ("2021-11-22", "2021-11-29", "UTC"),
    ("2021-11-22", "2021-11-29", "Pacific/Auckland"),
]


@pytest.fixture
def years(nextcloud: Nextcloud) -> Nextcloud:
    for uid, events in CALENDAR.items():
        nextcloud.put_calendar_object(nextcloud.admin, uid, _vcalendar(*events))
    return nextcloud


async def _full_read(nextcloud: Nextcloud, start: str, end: str, zone: str) -> list[tuple[str, str, str]]:
    """What the old way answered: every object of every calendar read, expanded here."""
    tz = ZoneInfo(zone)
    lower = datetime.fromisoformat(start).replace(tzinfo=tz)
    upper = datetime.fromisoformat(end).replace(tzinfo=tz)
    objects = list(nextcloud.calendar_objects(nextcloud.admin).values())
    expanded = await recurrence.expand(objects, lower, upper)
    found = []
    for occurrences in expanded.occurrences:
        for occurrence, recurs in occurrences or []:
            view = ical_read.event_view(occurrence, recurring=recurs)
            found.append((view["uid"], view["summary"], view["start"]))
    return sorted(found)


def _answer(listed: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((e["uid"], e["summary"], e["start"]) for e in listed["events"])


async def test_a_week_is_what_a_full_read_answers(years: Nextcloud) -> None:
    """Every week of WEEKS (two weeks, several zones) on one seeded calendar: read-only, so one
    seeding serves them all; each range is kept apart, so each is read from Nextcloud."""
    with running_app(years.settings()) as url:
        async with http_session(url + "/mcp") as session:
            for start, end, zone in WEEKS:
                arguments = {"start": start, "end": end, "timezone": zone, "limit": 1000}
                listed = structured(await session.call_tool("nc_calendar_list_events", arguments))
                _check_week(listed, await _full_read(years, start, end, zone), start)


def _check_week(listed: dict[str, Any], full_read: list[tuple[str, str, str]], start: str) -> None:
    assert _answer(listed) == full_read
    summaries = {e["summary"] for e in listed["events"]}
    assert "Ended" not in summaries
    assert "Before" not in summaries
    assert "After" not in summaries
    assert len([e for e in listed["events"] if e["uid"] == "daily"]) == 7
    if start.startswith("2026"):
        assert {"In the week", "All day", "Berlin", "Floating", "Weekly (moved in)", "Monthly"} <= summaries
        assert "Weekly (moved out)" not in summaries
        assert "Weekly" not in summaries
    else:
        assert {"Five years ago", "Weekly", "Monthly", "Floating then"} <= summaries
        assert "In the week" not in summaries
    assert listed["notes"] == []


async def test_a_week_asks_nextcloud_for_the_week_and_the_endless_rules_only(years: Nextcloud) -> None:
    """Per calendar: the week's REPORT (widened by 14 hours for floating times) and the REPORT of
    what ends after 2037-12-31 (rules without an end); on a 500 (Nextcloud 29, the double) the
    week from its start on, answered without expansion. No filter makes Nextcloud parse every
    event (a prop-filter), nothing reads the whole calendar."""
    with running_app(years.settings()) as url:
        async with http_session(url + "/mcp") as session:
            calendars = structured(await session.call_tool("nc_calendar_list_calendars", {}))["calendars"]
            with_events = sum(1 for c in calendars if c["supports_events"])
            requests = CalendarRequests(years)
            structured(
                await session.call_tool(
                    "nc_calendar_list_events",
                    {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "calendar": "personal"},
                )
            )
            refused = years.major < 34  # the daily rule: 29 and the double answer the week with 500
            week_reads = 3 if refused else 2
            assert requests.count("REPORT", expected=week_reads) == week_reads
            if years.double is not None:
                bodies = requests.report_bodies()
                ranges = sorted(
                    b[b.index("<c:time-range") : b.index("/>", b.index("<c:time-range"))] for b in bodies
                )
                assert ranges == [
                    '<c:time-range start="20261122T100000Z"',
                    '<c:time-range start="20261122T100000Z" end="20261130T140000Z"',
                    '<c:time-range start="20371231T000000Z"',
                ]
                assert all(
                    "prop-filter" not in b and "<d:getetag/><c:calendar-data/></d:prop>" in b for b in bodies
                )
            all_calendars = CalendarRequests(years)
            structured(
                await session.call_tool(
                    "nc_calendar_list_events", {"start": "2021-11-22", "end": "2021-11-29", "timezone": "UTC"}
                )
            )
            # five years ago the daily rule has fewer than 3500 occurrences: no refusal anywhere
            assert all_calendars.count("REPORT", expected=2 * with_events) == 2 * with_events


async def test_an_unchanged_calendar_is_not_read_again_and_any_change_is_seen(years: Nextcloud) -> None:
    """The second listing costs the calendars' PROPFIND only (their ctag, asked with the caller's
    credential); a change by another CalDAV client or by this server is seen at once: Nextcloud
    changes the ctag on every create, update and delete."""
    week = {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "calendar": "personal"}

    async def listed(session: Any) -> set[str]:
        return {
            e["summary"]
            for e in structured(await session.call_tool("nc_calendar_list_events", week))["events"]
        }

    with running_app(years.settings(confirm_destructive=False)) as url:
        async with http_session(url + "/mcp") as session:
            first_reads = CalendarRequests(years)
            first = await listed(session)
            week_reads = 3 if years.major < 34 else 2  # as above
            assert first_reads.count("REPORT", expected=week_reads) == week_reads
            again = CalendarRequests(years)
            assert await listed(session) == first
            assert again.count("REPORT") == 0
            years.put_calendar_object(
                years.admin,
                "other",
                _vcalendar(_lines("UID:other", "SUMMARY:From another client", "DTSTART:20261124T150000Z")),
            )
            assert await listed(session) == first | {"From another client"}
            years.put_calendar_object(
                years.admin,
                "other",
                _vcalendar(_lines("UID:other", "SUMMARY:Renamed elsewhere", "DTSTART:20261124T150000Z")),
            )
            assert await listed(session) == first | {"Renamed elsewhere"}
            created = structured(
                await session.call_tool(
                    "nc_calendar_create_event",
                    {
                        "summary": "Made here",
                        "start": "2026-11-25T08:00:00",
                        "timezone": "UTC",
                        "calendar": "personal",
                    },
                )
            )
            assert await listed(session) == first | {"Renamed elsewhere", "Made here"}
            with years.http(years.admin) as client:
                assert client.delete(years.calendar_path(years.admin) + "other.ics").status_code == 204
            assert await listed(session) == first | {"Made here"}
            deleted = await session.call_tool(
                "nc_calendar_delete_event", {"calendar": "personal", "uid": created["uid"]}
            )
            assert not deleted.is_error, deleted.content
            assert await listed(session) == first


async def test_a_kept_week_is_never_served_to_another_user(years: Nextcloud) -> None:
    """Alice asks for the same week of her own calendar in the same process: her own answer."""
    week = {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "calendar": "personal"}
    years.put_calendar_object(
        years.alice, "hers", _vcalendar(_lines("UID:hers", "SUMMARY:Hers", "DTSTART:20261124T150000Z"))
    )
    settings = years.settings()
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            mine = structured(await session.call_tool("nc_calendar_list_events", week))["events"]
    with running_app(years.settings(years.alice)) as url:
        async with http_session(url + "/mcp") as session:
            hers = structured(await session.call_tool("nc_calendar_list_events", week))["events"]
    assert "Hers" not in {e["summary"] for e in mine}
    assert [e["summary"] for e in hers] == ["Hers"]


async def test_reading_the_calendars_reports_progress(years: Nextcloud) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    with running_app(years.settings()) as url:
        async with http_session(url + "/mcp") as session:
            calendars = structured(await session.call_tool("nc_calendar_list_calendars", {}))["calendars"]
            with_events = sum(1 for c in calendars if c["supports_events"])
            result = await session.call_tool(
                "nc_calendar_find_availability",
                {"start": "2026-11-23", "end": "2026-11-30", "duration_minutes": 30, "timezone": "UTC"},
                progress_callback=progress,
            )
            with anyio.fail_after(10):  # notifications are handled apart from the result
                while len(seen) < with_events:
                    await anyio.sleep(0.01)
    assert not result.is_error, result.content
    assert [(done, total) for done, total, _ in seen] == [
        (float(i), float(with_events)) for i in range(1, with_events + 1)
    ]
    assert any(message == "read calendar personal" for _, _, message in seen)


BAD_RANGES = [
    ({"start": "2026-11-30", "end": "2026-11-23"}, "end must be after start"),
    ({"start": "2026-01-01", "end": "2028-06-01"}, "at most two years"),
    ({"start": "2026-13-01", "end": "2026-12-30"}, "2026-13-01"),
    ({"start": "2026-11-23", "end": "2026-11-30", "calendar": "../../files/admin"}, "no calendar"),
]


# refused before any request: every range on the double, the path that points elsewhere on the real ones
@cases("arguments, message", BAD_RANGES, on_real=BAD_RANGES[3:])
async def test_bad_ranges_are_refused_before_nextcloud_is_asked(
    nextcloud: Nextcloud, arguments: dict[str, str], message: str
) -> None:
    years = nextcloud  # nothing needs seeding: nothing may be asked
    with running_app(years.settings()) as url:
        async with http_session(url + "/mcp") as session:
            requests = CalendarRequests(years)
            result = await session.call_tool("nc_calendar_list_events", {**arguments, "timezone": "UTC"})
    assert result.is_error
    assert message in json.dumps([getattr(c, "text", "") for c in result.content])
    assert requests.count("REPORT") == 0


async def test_an_unchanged_task_list_is_not_read_again_and_a_new_task_is_seen(nextcloud: Nextcloud) -> None:
    def task(uid: str, summary: str) -> str:
        return (
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nSUMMARY:{summary}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        )

    mkcalendar(nextcloud, "tasks", "Tasks", "VTODO")
    nextcloud.put_calendar_object(
        nextcloud.admin, "first-task", task("first-task", "Water the plants"), "tasks"
    )

    async def listed(session: Any) -> list[str]:
        todos = structured(await session.call_tool("nc_calendar_list_todos", {"calendar": "tasks"}))["todos"]
        return sorted(t["summary"] for t in todos)

    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            first_read = CalendarRequests(nextcloud)
            assert await listed(session) == ["Water the plants"]
            assert first_read.count("REPORT", expected=1) == 1
            again = CalendarRequests(nextcloud)
            assert await listed(session) == ["Water the plants"]
            assert again.count("REPORT") == 0
            nextcloud.put_calendar_object(
                nextcloud.admin, "second-task", task("second-task", "Call Bob"), "tasks"
            )
            assert await listed(session) == ["Call Bob", "Water the plants"]
