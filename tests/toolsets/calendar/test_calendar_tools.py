"""The calendar toolset over MCP against both Nextclouds: the double (Radicale) and the real 29.0.6.

Other CalDAV clients (a phone, Thunderbird) are played with plain httpx against Nextcloud's own
CalDAV, so every check means the same on both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nextcloud_mcp_server.config import Settings
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

CALENDARS = "/remote.php/dav/calendars/admin"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture
def mcp_url(nextcloud: Nextcloud) -> Iterator[str]:
    """This server in front of the Nextcloud under test (both backends), as admin."""
    with running_app(nextcloud.settings()) as base:
        yield f"{base}/mcp"


def dav(nextcloud: Nextcloud) -> httpx.Client:
    """Another CalDAV client (a phone, Thunderbird) working on the same calendars."""
    return nextcloud.http()


def mkcalendar(nextcloud: Nextcloud, cal_id: str, name: str, components: str = "VEVENT") -> None:
    comps = "".join(f'<c:comp name="{c}"/>' for c in components.split(","))
    body = (
        '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
        f"<d:displayname>{name}</d:displayname><c:supported-calendar-component-set>{comps}"
        "</c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>"
    )
    with dav(nextcloud) as client:
        assert client.request("MKCALENDAR", f"{CALENDARS}/{cal_id}/", content=body).status_code == 201


@pytest.fixture
def home_with_a_calendar_in_the_trash(nextcloud: Nextcloud) -> str:
    """A task list made and a calendar made then deleted, before this server starts: on the kit's
    SQLite, a calendar's deletion meeting the server's first requests can be refused by Nextcloud
    ("database is locked", 500)."""
    mkcalendar(nextcloud, "tasks", "Tasks", "VTODO")
    mkcalendar(nextcloud, "old", "Old stuff")
    with dav(nextcloud) as client:
        assert client.delete(f"{CALENDARS}/old/").status_code == 204
        return client.request("PROPFIND", f"{CALENDARS}/", headers={"Depth": "1"}).text


async def test_calendars_are_listed_without_deleted_ones(
    home_with_a_calendar_in_the_trash: str, mcp_url: str, nextcloud: Nextcloud
) -> None:
    """personal (created by Nextcloud) and a task list are listed; a calendar in the trash bin,
    still in the home's PROPFIND with nc:deleted-calendar, is not."""
    # Nextcloud's trash bin (the double reproduces it)
    assert "deleted-calendar" in home_with_a_calendar_in_the_trash
    async with http_session(mcp_url) as session:
        listed = structured(await session.call_tool("nc_calendar_list_calendars", {}))
    real = nextcloud.kind == "real"
    birthdays = [  # Nextcloud 34 gives every account a read-only birthdays calendar: listed last
        {
            "id": "contact_birthdays",
            "name": "Contact birthdays",
            "color": "#E9D859",
            "supports_events": True,
            "supports_tasks": False,
            "writable": False,
            "default": False,
        }
    ]
    assert listed["calendars"] == [
        {
            "id": "personal",
            "name": "Personal",
            "color": "#00679e" if nextcloud.major >= 34 else "#0082c9",
            "supports_events": True,
            "supports_tasks": False,  # Nextcloud makes it for events only
            "writable": True,
            "default": real,  # the principal's schedule-default-calendar-URL (the double has none)
        },
        {
            "id": "tasks",
            "name": "Tasks",
            "color": None,
            "supports_events": False,
            "supports_tasks": True,
            "writable": True,
            "default": False,
        },
        *(birthdays if nextcloud.major >= 34 else []),
    ]


async def test_a_weekly_event_is_created_expanded_updated_and_deleted(
    mcp_url: str, nextcloud: Nextcloud
) -> None:
    """Create a weekly series in Berlin time; list four weeks (four occurrences, sorted); update
    with the etag; a stale etag is a conflict; delete."""
    human = Human()
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        created = structured(
            await session.call_tool(
                "nc_calendar_create_event",
                {
                    "summary": "Standup",
                    "start": "2026-11-23T09:00",
                    "end": "2026-11-23T09:15",
                    "timezone": "Europe/Berlin",
                    "recurrence": "FREQ=WEEKLY;BYDAY=MO",
                    "reminders": [10],
                    "attendees": [{"email": "bob@example.com", "name": "Bob"}],
                    "location": "Room 1",
                },
            )
        )
        assert created["calendar"] == "personal"
        assert created["recurrence"] == "FREQ=WEEKLY;BYDAY=MO"
        uid = created["uid"]

        listed = structured(
            await session.call_tool(
                "nc_calendar_list_events",
                {"start": "2026-11-22", "end": "2026-12-20", "timezone": "Europe/Berlin"},
            )
        )
        assert [e["start"] for e in listed["events"]] == [
            "2026-11-23T09:00:00+01:00",
            "2026-11-30T09:00:00+01:00",
            "2026-12-07T09:00:00+01:00",
            "2026-12-14T09:00:00+01:00",
        ]
        assert all(e["recurring"] and e["uid"] == uid for e in listed["events"])
        assert listed["events"][0]["reminders"] == [10]
        assert listed["events"][0]["attendees"][0]["email"] == "bob@example.com"

        got = structured(
            await session.call_tool("nc_calendar_get_event", {"calendar": "personal", "uid": uid})
        )
        updated = structured(
            await session.call_tool(
                "nc_calendar_update_event",
                {"calendar": "personal", "uid": uid, "etag": got["etag"], "summary": "Team standup"},
            )
        )
        assert updated["summary"] == "Team standup"
        assert updated["location"] == "Room 1"
        assert updated["etag"] != got["etag"]

        stale = await session.call_tool(
            "nc_calendar_update_event",
            {"calendar": "personal", "uid": uid, "etag": got["etag"], "summary": "Overwrite"},
        )
        assert refusal_details(stale)["current_event"]["summary"] == "Team standup"

        deleted = structured(
            await session.call_tool("nc_calendar_delete_event", {"calendar": "personal", "uid": uid})
        )
        assert deleted["summary"] == "Team standup"
        assert human.questions == [
            'Delete the event "Team standup" on Mon 23 Nov 2026, 09:00-09:15 (Europe/Berlin) (every '
            "occurrence of this recurring event) from calendar 'personal'?"
        ]
        empty = structured(
            await session.call_tool("nc_calendar_list_events", {"start": "2026-11-22", "end": "2026-12-20"})
        )
        assert empty["events"] == []


OTHER_CLIENT_EVENT = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Phone//EN
BEGIN:VEVENT
UID:phone-1
DTSTAMP:20261101T000000Z
DTSTART:20261125T120000Z
DTEND:20261125T130000Z
SUMMARY:Lunch
X-PHONE-TRAVEL-TIME:PT15M
CATEGORIES:Private
BEGIN:VALARM
ACTION:AUDIO
TRIGGER:-PT5M
END:VALARM
END:VEVENT
END:VCALENDAR
"""


async def test_an_update_preserves_what_another_client_stored(mcp_url: str, nextcloud: Nextcloud) -> None:
    """An event written by another client (at an href that is not <uid>.ics), with properties
    this server does not model, keeps them after an update through the tool."""
    href = f"{CALENDARS}/personal/some-phone-name.ics"
    with dav(nextcloud) as client:
        assert client.put(href, content=OTHER_CLIENT_EVENT).status_code == 201
    async with http_session(mcp_url) as session:
        got = structured(
            await session.call_tool("nc_calendar_get_event", {"calendar": "personal", "uid": "phone-1"})
        )
        structured(
            await session.call_tool(
                "nc_calendar_update_event",
                {"calendar": "personal", "uid": "phone-1", "etag": got["etag"], "location": "Canteen"},
            )
        )
    with dav(nextcloud) as client:
        stored = client.get(href).text.replace("\r\n", "\n")
    assert "LOCATION:Canteen" in stored
    assert "X-PHONE-TRAVEL-TIME:PT15M" in stored
    assert "CATEGORIES:Private" in stored
    assert "ACTION:AUDIO" in stored
    assert "DTSTART:20261125T120000Z" in stored


async def test_all_day_events_report_their_last_day(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        created = structured(
            await session.call_tool(
                "nc_calendar_create_event",
                {"summary": "Holidays", "start": "2026-12-24", "end": "2026-12-26", "all_day": True},
            )
        )
        listed = structured(
            await session.call_tool("nc_calendar_list_events", {"start": "2026-12-25", "end": "2026-12-26"})
        )
    assert (created["start"], created["end"], created["all_day"]) == ("2026-12-24", "2026-12-26", True)
    assert [(e["summary"], e["start"], e["end"]) for e in listed["events"]] == [
        ("Holidays", "2026-12-24", "2026-12-26")
    ]


async def test_events_of_all_calendars_are_merged_by_start(mcp_url: str, nextcloud: Nextcloud) -> None:
    mkcalendar(nextcloud, "work", "Work")
    async with http_session(mcp_url) as session:
        for calendar, summary, start in (
            ("work", "Review", "2026-11-24T14:00Z"),
            ("personal", "Gym", "2026-11-24T07:00Z"),
        ):
            await session.call_tool(
                "nc_calendar_create_event", {"summary": summary, "start": start, "calendar": calendar}
            )
        both = structured(
            await session.call_tool("nc_calendar_list_events", {"start": "2026-11-24", "end": "2026-11-25"})
        )
        work = structured(
            await session.call_tool(
                "nc_calendar_list_events", {"start": "2026-11-24", "end": "2026-11-25", "calendar": "work"}
            )
        )
    assert [(e["summary"], e["calendar"]) for e in both["events"]] == [
        ("Gym", "personal"),
        ("Review", "work"),
    ]
    assert [e["summary"] for e in work["events"]] == ["Review"]


async def test_tasks_are_created_completed_reopened_and_deleted(mcp_url: str, nextcloud: Nextcloud) -> None:
    """Tasks land in the first calendar that takes them: Nextcloud's `personal` takes events only,
    so a task list is made first, as the Tasks app does."""
    mkcalendar(nextcloud, "tasks", "Tasks", "VTODO")
    human = Human()
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        task = structured(
            await session.call_tool(
                "nc_calendar_create_todo", {"summary": "File taxes", "due": "2026-12-31", "priority": 1}
            )
        )
        structured(await session.call_tool("nc_calendar_create_todo", {"summary": "Someday"}))
        open_tasks = structured(await session.call_tool("nc_calendar_list_todos", {}))
        assert [t["summary"] for t in open_tasks["todos"]] == ["File taxes", "Someday"]  # undated last

        done = structured(
            await session.call_tool(
                "nc_calendar_update_todo",
                {"calendar": "tasks", "uid": task["uid"], "etag": task["etag"], "completed": True},
            )
        )
        assert (done["completed"], done["percent_complete"]) == (True, 100)
        still_open = structured(await session.call_tool("nc_calendar_list_todos", {}))
        finished = structured(await session.call_tool("nc_calendar_list_todos", {"status": "completed"}))
        assert [t["summary"] for t in still_open["todos"]] == ["Someday"]
        assert [t["summary"] for t in finished["todos"]] == ["File taxes"]
        due_soon = structured(
            await session.call_tool("nc_calendar_list_todos", {"status": "all", "due_before": "2027-01-01"})
        )
        assert [t["summary"] for t in due_soon["todos"]] == ["File taxes"]

        stale = await session.call_tool(
            "nc_calendar_update_todo",
            {"calendar": "tasks", "uid": task["uid"], "etag": task["etag"], "completed": False},
        )
        assert refusal_details(stale)["current_todo"]["completed"] is True

        reopened = structured(
            await session.call_tool(
                "nc_calendar_update_todo",
                {"calendar": "tasks", "uid": task["uid"], "etag": done["etag"], "completed": False},
            )
        )
        assert (reopened["completed"], reopened["status"], reopened["due"]) == (
            False,
            "NEEDS-ACTION",
            "2026-12-31",
        )

        deleted = structured(
            await session.call_tool("nc_calendar_delete_todo", {"calendar": "tasks", "uid": task["uid"]})
        )
        assert deleted["summary"] == "File taxes"
        assert human.questions == ["Delete the task \"File taxes\", due 2026-12-31 (open) from 'tasks'?"]


async def test_free_time_is_found_around_busy_events(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        await session.call_tool(
            "nc_calendar_create_event",
            {
                "summary": "Busy",
                "start": "2026-11-23T10:00",
                "end": "2026-11-23T11:00",
                "timezone": "Europe/Berlin",
            },
        )
        free = structured(
            await session.call_tool(
                "nc_calendar_find_availability",
                {
                    "start": "2026-11-23T00:00",
                    "end": "2026-11-24T00:00",
                    "duration_minutes": 60,
                    "timezone": "Europe/Berlin",
                },
            )
        )
    assert free["timezone"] == "Europe/Berlin"
    assert [(s["start"], s["end"]) for s in free["slots"]] == [
        ("2026-11-23T09:00:00+01:00", "2026-11-23T10:00:00+01:00"),
        ("2026-11-23T11:00:00+01:00", "2026-11-23T17:00:00+01:00"),
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "nc_calendar_create_event",
            {"summary": "x", "start": "2026-11-23T10:00", "end": "2026-11-23T09:00"},
            "end must be after start",
        ),
        ("nc_calendar_create_event", {"summary": "x", "start": "tomorrow"}, "not an ISO 8601"),
        (
            "nc_calendar_create_event",
            {"summary": "x", "start": "2026-11-23T10:00", "timezone": "Mars/Base"},
            "unknown time zone",
        ),
        (
            "nc_calendar_create_event",
            {"summary": "x", "start": "2026-11-23T10:00", "calendar": "nope"},
            "no calendar 'nope'; the calendars are: personal",
        ),
        (
            "nc_calendar_create_event",
            {"summary": "x", "start": "2026-11-23T10:00", "recurrence": "EVERY MONDAY"},
            "not a valid RRULE",
        ),
        ("nc_calendar_list_events", {"start": "2026-01-01", "end": "2030-01-01"}, "at most two years"),
    ],
)
async def test_bad_calendar_input_is_refused_and_nothing_is_written(
    settings: Settings, double: NextcloudDouble, tool: str, arguments: dict[str, Any], message: str
) -> None:
    """Double only: it records the requests that reached it."""
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool(tool, arguments)
    assert result.is_error
    assert message in _text(result)
    assert not [r for r in double.requests if r.method == "PUT"]
