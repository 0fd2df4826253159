"""Two reads of one calendar range that saw the same ctag share one read (ADR 0069); another
user's read is their own. On the double: the sharing is what is tested, not Nextcloud."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from tests.backends import Nextcloud

pytestmark = pytest.mark.integration

EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n"
    "DTSTAMP:20260101T000000Z\r\nDTSTART:20261124T100000Z\r\nDTEND:20261124T110000Z\r\n"
    "SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def _held(answers: KeptAnswers, joined: int, query: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    async def held(*args: Any, **kwargs: Any) -> Any:
        deadline = asyncio.get_running_loop().time() + 10
        while answers.flights.joined < joined:
            assert asyncio.get_running_loop().time() < deadline, "nobody joined the read"
            await asyncio.sleep(0.01)
        return await query(*args, **kwargs)

    return held


@pytest.mark.parametrize("nextcloud", ["double"], indirect=True)
async def test_two_reads_of_a_week_share_one_read_per_user(nextcloud: Nextcloud) -> None:
    for login in (nextcloud.admin, nextcloud.alice):
        nextcloud.put_calendar_object(
            login, f"{login.user}-ev", EVENT.format(uid=f"{login.user}-ev", summary=login.user)
        )
    http = NextcloudHTTP(nextcloud.url)
    cache, answers = DiscoveryCache(), KeptAnswers()
    clients = [
        NextcloudClient(http, BasicCredential(who.user, who.app_password), cache=cache, answers=answers)
        for who in (nextcloud.admin, nextcloud.admin, nextcloud.alice, nextcloud.alice)
    ]
    reads = 0

    def counted(query: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def count(*args: Any, **kwargs: Any) -> Any:
            nonlocal reads
            reads += 1
            return await query(*args, **kwargs)

        return count

    for client in clients:  # a read waits until the other caller of its user joined it
        client.caldav.query = _held(answers, 2, counted(client.caldav.query))  # type: ignore[method-assign]

    async def week(client: NextcloudClient) -> list[str]:
        calendar = next(c for c in await client.caldav.calendars(find_default=False) if c.id == "personal")
        lower, upper = datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC)
        return sorted(
            o.href.rsplit("/", 1)[1] for o in await client.caldav.events_between(calendar, lower, upper)
        )

    try:
        found = await asyncio.gather(*(week(c) for c in clients))
    finally:
        await http.aclose()
    assert found == [["admin-ev.ics"], ["admin-ev.ics"], ["alice-ev.ics"], ["alice-ev.ics"]]
    assert reads == 4  # per user one read of the week: its range and the rules without an end
