"""Recurrence bounds (issue 13, item 1): an event planted by someone else that repeats every second
must not freeze the server; creating one is refused. See ADR 0019."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nextcloud_mcp_server.nextcloud.dav import recurrence
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _event(uid: str, start: str, rule: str, summary: str = "Every second") -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//someone else//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1S\r\n"
        f"SUMMARY:{summary}\r\nRRULE:{rule}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )


@pytest.fixture
def planted(nextcloud: Nextcloud) -> Nextcloud:
    """An endless every-second event that started weeks ago, and an ordinary weekly one."""
    nextcloud.put_calendar_object(
        nextcloud.admin, "hostile", _event("hostile", "20261101T000000Z", "FREQ=SECONDLY")
    )
    nextcloud.put_calendar_object(
        nextcloud.admin, "weekly", _event("weekly", "20261102T090000Z", "FREQ=WEEKLY", "Standup")
    )
    return nextcloud


@pytest.mark.parametrize("end", ["2026-11-24", "2028-11-23"])
async def test_an_endless_secondly_event_is_listed_once_with_a_note(planted: Nextcloud, end: str) -> None:
    """A day and the largest range (731 days): the hostile event appears once, as its series,
    with a note naming it; the ordinary weekly event is expanded as usual."""
    with running_app(planted.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = structured(
                await session.call_tool(
                    "nc_calendar_list_events",
                    {"start": "2026-11-23", "end": end, "timezone": "UTC", "limit": 1000},
                )
            )
    hostile = [e for e in listed["events"] if e["uid"] == "hostile"]
    weekly = [e for e in listed["events"] if e["uid"] == "weekly"]
    assert len(hostile) == 1
    assert hostile[0]["recurrence"] == "FREQ=SECONDLY"
    assert len(weekly) == (1 if end == "2026-11-24" else 105)
    # Nextcloud 29 (and the double) refuse to search the calendar by date past Sabre's
    # 3500-instance limit and 34 leaves the event out silently: rules without an end are asked
    # for apart (ADR 0050), so the answer is whole and only the event itself has a note.
    assert len(listed["notes"]) == 1
    assert '"Every second" (uid hostile) repeats too often to expand (FREQ=SECONDLY' in listed["notes"][0]


async def test_free_time_with_an_endless_secondly_event_says_it_is_unsure(planted: Nextcloud) -> None:
    with running_app(planted.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            found = structured(
                await session.call_tool(
                    "nc_calendar_find_availability",
                    {"start": "2026-11-23", "end": "2028-11-23", "duration_minutes": 30, "timezone": "UTC"},
                )
            )
    assert len(found["notes"]) == 1  # the answer is whole (ADR 0050); the event is not expanded
    assert "uid hostile" in found["notes"][-1]


async def test_a_dense_event_with_an_end_is_cut_at_the_per_event_limit(nextcloud: Nextcloud) -> None:
    """Every second for 3000 seconds (Nextcloud refuses to store a finite rule with more than 3500
    instances): expandable, but only MAX_PER_EVENT occurrences are listed."""
    nextcloud.put_calendar_object(
        nextcloud.admin, "dense", _event("dense", "20261123T100000Z", "FREQ=SECONDLY;COUNT=3000")
    )
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = structured(
                await session.call_tool(
                    "nc_calendar_list_events",
                    {"start": "2026-11-23", "end": "2026-11-24", "timezone": "UTC", "limit": 1000},
                )
            )
    assert len(listed["events"]) == recurrence.MAX_PER_EVENT
    assert listed["events"][0]["start"] == "2026-11-23T10:00:00+00:00"
    assert listed["notes"] == [
        f'"Every second" (uid dense): only the first {recurrence.MAX_PER_EVENT} occurrences are listed '
        "(limit per event)"
    ]


@pytest.mark.parametrize("tool", ["nc_calendar_create_event", "nc_calendar_update_event"])
async def test_an_endless_secondly_or_minutely_rule_is_refused(nextcloud: Nextcloud, tool: str) -> None:
    etag = nextcloud.put_calendar_object(
        nextcloud.admin, "fine", _event("fine", "20261123T100000Z", "FREQ=DAILY;COUNT=3", "Fine")
    )
    before = nextcloud.calendar_objects(nextcloud.admin)
    args: dict[str, Any] = {"summary": "Spam", "start": "2026-11-23T10:00", "timezone": "UTC"}
    if tool == "nc_calendar_update_event":
        args = {"calendar": "personal", "uid": "fine", "etag": etag}
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            for rule in ("FREQ=SECONDLY", "FREQ=MINUTELY;INTERVAL=5"):
                result = await session.call_tool(tool, {**args, "recurrence": rule})
                assert result.is_error
                assert "needs an end (COUNT=n or UNTIL=...)" in _text(result)
    assert nextcloud.calendar_objects(nextcloud.admin) == before


_EVERY = ",".join(str(n) for n in range(60))
_HOURS = ",".join(str(n) for n in range(24))


@pytest.mark.parametrize("tool", ["nc_calendar_create_event", "nc_calendar_update_event"])
async def test_an_endless_rule_is_bounded_by_how_often_it_repeats_not_by_its_freq_name(
    nextcloud: Nextcloud, tool: str
) -> None:
    """Every second spelled FREQ=HOURLY with BY lists (issue 31, item 14), every minute spelled
    DAILY, is refused without an end like FREQ=SECONDLY; an endless rule as dense as an hourly
    one is accepted whatever it is called, and a dense rule with an end too."""
    etag = nextcloud.put_calendar_object(
        nextcloud.admin, "fine", _event("fine", "20261123T100000Z", "FREQ=DAILY;COUNT=3", "Fine")
    )
    before = nextcloud.calendar_objects(nextcloud.admin)
    args: dict[str, Any] = {"summary": "Spam", "start": "2026-11-23T10:00", "timezone": "UTC"}
    updating = tool == "nc_calendar_update_event"
    if updating:
        args = {"calendar": "personal", "uid": "fine", "etag": etag}
    refused, accepted = [], []
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            for rule in (
                f"FREQ=HOURLY;BYMINUTE={_EVERY};BYSECOND={_EVERY}",
                f"FREQ=DAILY;BYHOUR={_HOURS};BYMINUTE={_EVERY}",
                f"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR={_HOURS};BYMINUTE=0,30",
            ):
                refused.append(await session.call_tool(tool, {**args, "recurrence": rule}))
            assert nextcloud.calendar_objects(nextcloud.admin) == before
            for rule in ("FREQ=MINUTELY;INTERVAL=60", f"FREQ=HOURLY;BYMINUTE={_EVERY};COUNT=100"):
                done = structured(await session.call_tool(tool, {**args, "recurrence": rule}))
                accepted.append(done["recurrence"])
                if updating:
                    args["etag"] = done["etag"]
    for result in refused:
        assert result.is_error
        assert "needs an end (COUNT=n or UNTIL=...)" in _text(result)
    assert accepted == ["FREQ=MINUTELY;INTERVAL=60", f"FREQ=HOURLY;COUNT=100;BYMINUTE={_EVERY}"]


@pytest.fixture
def blocked_expansion(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, list[str]]]:
    """Expansion that waits until the test lets it go, recording the thread it runs in."""
    release, threads = threading.Event(), []
    real = recurrence._expand_sync

    def waiting(*args: Any) -> None:
        threads.append(threading.current_thread().name)
        assert release.wait(timeout=60)
        real(*args)

    monkeypatch.setattr(recurrence, "_expand_sync", waiting)
    yield release, threads
    release.set()


async def test_health_answers_while_an_expansion_is_in_progress(
    nextcloud: Nextcloud, blocked_expansion: tuple[threading.Event, list[str]]
) -> None:
    """The expansion runs in its own thread: while it is held, /health still answers."""
    import asyncio

    release, threads = blocked_expansion
    nextcloud.put_calendar_object(nextcloud.admin, "daily", _event("daily", "20261120T090000Z", "FREQ=DAILY"))
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            call = asyncio.create_task(
                session.call_tool("nc_calendar_list_events", {"start": "2026-11-23", "end": "2026-11-24"})
            )
            for _ in range(3000):  # the call reaches the expansion (polled, bounded)
                if threads or call.done():
                    break
                await asyncio.sleep(0.01)
            assert threads, call
            async with httpx.AsyncClient() as client:
                health = await client.get(f"{base}/health", timeout=30)
            assert health.status_code == 200
            assert not call.done()
            release.set()
            assert not (await call).is_error
    assert threads == ["recurrence-expansion"]


async def test_a_rule_that_never_matches_is_stopped_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """dateutil walks to the year 9999 looking for 30 February; the worker thread is stopped."""
    import asyncio
    from datetime import UTC, datetime

    monkeypatch.setattr(recurrence, "DEADLINE_SECONDS", 0.2)
    never = _event("never", "20261101T000000Z", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=5", "Never")
    plain = _event("plain", "20261123T100000Z", "FREQ=DAILY;COUNT=1", "Plain")
    found = await recurrence.expand(
        [plain, never], datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 24, tzinfo=UTC)
    )
    assert [len(o or []) for o in found.occurrences] == [1, 0]
    assert found.notes == [
        "1 calendar object(s) were not expanded: the listing stopped at its limit "
        f"({recurrence.MAX_PER_CALL} occurrences or 0.2 s); ask for a shorter range"
    ]
    for _ in range(500):
        if not any(t.name == "recurrence-expansion" for t in threading.enumerate()):
            break
        await asyncio.sleep(0.02)
    assert not any(t.name == "recurrence-expansion" for t in threading.enumerate())
