"""Events the find index reads as another client left them, on the double and the real Nextcloud
29 and 34 (both store them): a LAST-MODIFIED in year 1 before UTC, whose timestamp() raised, and
an object of a megabyte of lines, parsed on the event loop. The first stopped every index round
of its user, with the other events of the calendar never findable; the second held the loop."""

from __future__ import annotations

import time

import pytest

from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sources import MAX_CALENDAR_OBJECT, sync_calendars
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.sync import Round
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from tests.backends import Nextcloud

pytestmark = pytest.mark.integration
USER = "nextcloud:admin"


def _event(uid: str, summary: str, extra: str = "") -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//someone else//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261204T090000Z\r\n"
        f"DTEND:20261204T093000Z\r\nSUMMARY:{summary}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


async def test_an_odd_event_does_not_stop_the_index_of_the_others(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    admin = nextcloud.admin
    nextcloud.put_calendar_object(admin, "dentist", _event("dentist", "Dentist appointment"))
    nextcloud.put_calendar_object(
        admin, "ancient", _event("ancient", "Ancient pottery", "LAST-MODIFIED:00010101T000000\r\n")
    )
    filler = "".join(f"X-FILLER-{n}:b\r\n" for n in range(MAX_CALENDAR_OBJECT // 12))
    nextcloud.put_calendar_object(admin, "huge", _event("huge", "Huge ledger", filler))
    for _ in range(2):  # every round, not only the first
        work = Round(deadline=time.monotonic() + 120)
        await sync_calendars(index, USER, client, work)
        assert work.errors == []
    found = {
        word: [h.title for h in await index.search(USER, parse_query(word), Filters(), limit=10)]
        for word in ("dentist", "pottery", "ledger")
    }
    # the huge one is not read for its words
    assert found == {"dentist": ["Dentist appointment"], "pottery": ["Ancient pottery"], "ledger": []}
