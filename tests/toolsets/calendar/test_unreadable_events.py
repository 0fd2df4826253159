"""An event another client wrote that this server cannot read leaves the others readable: the list
shows them with a note naming what was left out, where it was an internal error (an all-day
event ending on 9999-12-31, which Nextcloud 29 and 34 store, overflowed the date type). Reading
a single unreadable event: tests/nextcloud/test_ical.py."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


def _calendar(uid: str, lines: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//someone else//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\n{lines}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )


async def test_an_event_ending_in_year_9999_is_left_out_with_a_note(nextcloud: Nextcloud) -> None:
    nextcloud.put_calendar_object(
        nextcloud.admin,
        "standup",
        _calendar("standup", "DTSTART:20261123T090000Z\r\nDURATION:PT15M\r\nSUMMARY:Standup"),
    )
    nextcloud.put_calendar_object(
        nextcloud.admin,
        "forever",
        _calendar("forever", "DTSTART;VALUE=DATE:20261120\r\nDTEND;VALUE=DATE:99991231\r\nSUMMARY:Forever"),
    )
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = structured(
                await session.call_tool(
                    "nc_calendar_list_events", {"start": "2026-11-23", "end": "2026-11-24", "timezone": "UTC"}
                )
            )
    assert [e["summary"] for e in listed["events"]] == ["Standup"]
    assert any("left out" in note and "out of range" in note for note in listed["notes"]), listed["notes"]
