"""A week that Nextcloud 29 refuses (HTTP 500: a rule repeats over 3,500 times before it) is read
from its start on, and every later event comes too: those that plainly start after the week are
left unparsed (`ical_screen`), the rest expanded as before. On 34 the week is not refused, and the
later events never come. Against the double (refuses as 29 does) and both real Nextclouds."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.dav import recurrence
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.toolsets.calendar.test_calendar_week import CALENDAR, _vcalendar

pytestmark = pytest.mark.integration


async def test_the_events_after_a_refused_week_are_not_parsed(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    for uid, events in CALENDAR.items():
        nextcloud.put_calendar_object(nextcloud.admin, uid, _vcalendar(*events))
    parsed: list[str] = []
    parse = recurrence.load

    def counted(ics: str) -> object:
        parsed.append(ics)
        return parse(ics)

    monkeypatch.setattr(recurrence, "load", counted)
    week = {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "calendar": "personal"}
    with running_app(nextcloud.settings()) as url:
        async with http_session(url + "/mcp") as session:
            listed = structured(await session.call_tool("nc_calendar_list_events", week))
    summaries = {e["summary"] for e in listed["events"]}
    assert {"In the week", "All day", "Berlin", "Floating", "Monthly"} <= summaries
    assert "After" not in summaries
    lines = [line for ics in parsed for line in ics.splitlines()]
    uids = {line.removeprefix("UID:") for line in lines if line.startswith("UID:")}
    assert {"in-week", "all-day", "berlin", "floating", "daily"} <= uids
    assert "after" not in uids  # starts a week after the range: never parsed
