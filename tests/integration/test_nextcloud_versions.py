"""What differs between the Nextclouds people run (29 and 34), met by the tools: the calendar
used when none is named, a person who has only ever used an app password, the version `check`
names. Against the double and both real Nextclouds."""

from __future__ import annotations

import httpx
import pytest

from nextcloud_mcp_server.diagnostics import run_checks
from tests.backends import Login, Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


def _text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))


async def test_the_default_calendar_is_listed_first_and_used_when_none_is_named(nextcloud: Nextcloud) -> None:
    """Nextcloud 34 lists a read-only "Contact birthdays" calendar first: a model that took the
    first calendar got "read-only" on every write."""
    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            listed = structured(await session.call_tool("nc_calendar_list_calendars", {}))["calendars"]
            event = structured(
                await session.call_tool(
                    "nc_calendar_create_event", {"summary": "Dentist", "start": "2026-12-03T09:00:00"}
                )
            )
    first = listed[0]
    assert first["writable"], listed
    assert first["supports_events"], listed
    writable = [c["writable"] for c in listed]
    assert writable == sorted(writable, reverse=True), listed  # what can only be read comes last
    assert sum(c["default"] for c in listed) == (1 if nextcloud.kind == "real" else 0)
    if nextcloud.kind == "real":
        assert (first["id"], first["default"]) == ("personal", True)
    assert event["calendar"] == first["id"]


async def test_someone_who_never_logged_in_on_the_web_gets_a_calendar_and_is_told_about_contacts(
    each_real_nextcloud: Nextcloud,
) -> None:
    """Nextcloud makes the default calendar and address book at the first web login. For an app
    password, 29 makes the calendar at the first request; 34 makes it when asked where the
    default calendar is (which the tools ask): so an event lands there on both. An address book
    neither makes, and the tool says what to do."""
    nextcloud = each_real_nextcloud
    assert nextcloud.instance is not None
    password = "Carol-login-0815"
    carol = Login("carol", password, nextcloud.instance.add_user("carol", password), "carol")
    with running_app(nextcloud.settings(carol)) as url:
        async with http_session(url + "/mcp") as session:
            event = await session.call_tool(
                "nc_calendar_create_event", {"summary": "Lunch", "start": "2026-12-03T12:00:00"}
            )
            contact = await session.call_tool("nc_contacts_create_contact", {"full_name": "Dora Kiwi"})
    assert not event.is_error, _text(event)
    assert structured(event)["calendar"] == "personal"
    assert contact.is_error  # neither 29 nor 34 makes an address book for an app password
    assert "you have no address book of your own yet" in _text(contact)
    assert "log in to Nextcloud's web page once" in _text(contact)


async def test_check_names_the_version_and_warns_outside_the_tested_ones(nextcloud: Nextcloud) -> None:
    checks = await run_checks(nextcloud.settings())
    reachable = next(c for c in checks if c.name == "reachable")
    expected = nextcloud.version if nextcloud.kind == "real" else "29.0.6"
    assert reachable.detail.startswith(f"Nextcloud {expected} answered")
    assert "version" not in {c.name for c in checks}
    if nextcloud.double is not None:
        nextcloud.double.version = "27.1.11"
        older = await run_checks(nextcloud.settings())
        warned = next(c for c in older if c.name == "version")
        assert warned.status == "warn"
        assert (
            "Nextcloud 27.1.11 is outside the releases this server is tested with (29 to 34)" in warned.detail
        )


async def test_nextcloud_34s_sample_event_is_an_event_like_any_other(
    each_real_nextcloud_as_seeded: Nextcloud,
) -> None:
    """34 gives every new account an "Example event - open me!" a week after its first login."""
    nextcloud = each_real_nextcloud_as_seeded
    samples = [ics for ics in nextcloud.calendar_objects(nextcloud.admin).values() if "Example event" in ics]
    assert len(samples) == (1 if nextcloud.major >= 34 else 0)
    if not samples:
        return
    day = next(line for line in samples[0].splitlines() if line.startswith("DTSTART")).split(":")[1][:8]
    start = f"{day[:4]}-{day[4:6]}-{day[6:]}"
    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            listed = structured(
                await session.call_tool(
                    "nc_calendar_list_events", {"start": start, "end": f"{start}T23:59:59"}
                )
            )
    assert [e["summary"] for e in listed["events"]] == ["Example event - open me!"]


async def test_a_daily_event_of_many_years_is_listed_in_this_week(nextcloud: Nextcloud) -> None:
    """Past 3500 instances up to the range's end, Nextcloud 29 fails a date query (HTTP 500) and
    34 leaves the event out of its answer without a word: a daily stand-up since 2015 vanished
    from every week on 34. Repeating events are now always asked for apart."""
    nextcloud.put_calendar_object(
        nextcloud.admin,
        "standup",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:standup\r\n"
        "DTSTAMP:20150101T000000Z\r\nDTSTART:20150101T090000Z\r\nDURATION:PT15M\r\n"
        "SUMMARY:Stand-up\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            listed = structured(
                await session.call_tool(
                    "nc_calendar_list_events", {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC"}
                )
            )
    assert [e["start"][:16] for e in listed["events"]] == [f"2026-11-{day}T09:00" for day in range(23, 30)]


async def test_a_name_nextcloud_forbids_is_refused_with_its_reason(each_real_nextcloud: Nextcloud) -> None:
    """Nextcloud 30+ can forbid names (here: "Windows-compatible file names", an admin setting,
    switched on through Nextcloud's own API); the tool says what Nextcloud said, and nothing is
    written. 29 has no such setting and takes the name."""
    nextcloud = each_real_nextcloud
    if nextcloud.major >= 30:
        with httpx.Client(  # the login password is hashed at each request: seconds at load
            base_url=nextcloud.url, auth=(nextcloud.admin.user, nextcloud.admin.password), timeout=60
        ) as admin:
            switched = admin.post(
                "/ocs/v2.php/apps/files/api/v1/filenames/windows-compatibility",
                data={"enabled": "true"},
                headers={"OCS-APIRequest": "true", "Accept": "application/json"},
            )
        assert switched.status_code == 200, switched.text
    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            written = await session.call_tool(
                "nc_webdav_write_file", {"path": "report|final.txt", "content": "x"}
            )
    if nextcloud.major >= 30:
        assert written.is_error
        assert 'Nextcloud says: "|" is not allowed inside a file or folder name' in _text(written)
        assert not nextcloud.exists(nextcloud.admin, "report|final.txt")
    else:
        assert not written.is_error, _text(written)
        assert nextcloud.read_file(nextcloud.admin, "report|final.txt") == b"x"
