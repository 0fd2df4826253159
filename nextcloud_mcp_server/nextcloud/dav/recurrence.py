"""Bounded expansion of recurring events: whatever a calendar holds, a listing does bounded work.

Events can be planted by others (shared calendars, invitations), so an `RRULE:FREQ=SECONDLY`
without an end, or a rule whose filters never match (dateutil then walks to the year 9999), must
not freeze the server. Four bounds, see ADR 0019:
- before expanding, the work a rule causes (periods from its DTSTART to the end of the range,
  times the occurrences one period can hold) is estimated; above `MAX_STEPS` the event is listed
  once, not expanded, with a note;
- at most `MAX_PER_EVENT` occurrences per event and `MAX_PER_CALL` per call, with a note;
- expansion runs in its own thread, never on the event loop, at most `CONCURRENT` at a time;
- a deadline: checked between occurrences, and enforced by raising an exception inside the worker
  thread for work that does not come back (dateutil's search for a match that never comes).
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import icalendar
import recurring_ical_events

from nextcloud_mcp_server.nextcloud.dav import rrule_cost
from nextcloud_mcp_server.nextcloud.dav.ical import as_datetime, load
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = [
    "DEADLINE_SECONDS",
    "MAX_PER_CALL",
    "MAX_PER_EVENT",
    "MAX_STEPS",
    "Expanded",
    "expand",
    "rule_steps",
]

MAX_STEPS = 100_000
MAX_PER_EVENT = 1000
MAX_PER_CALL = 5000
DEADLINE_SECONDS = 5.0
CONCURRENT = 2  # expansions running at once in the process; the others wait (within their deadline)
_running = threading.BoundedSemaphore(CONCURRENT)

Occurrences = list[tuple[icalendar.cal.Component, bool]]


class _Stop(BaseException):
    """Raised inside the worker thread at the deadline (not an Exception: nothing swallows it)."""


@dataclass
class Expanded:
    """Per input object (same order), its occurrences in the range; `None` for an object that was
    not reached before the deadline. `notes` say, in words, what was cut and why."""

    occurrences: list[Occurrences | None]
    notes: list[str] = field(default_factory=list)


def rule_steps(recur: Any, dtstart: date | datetime, horizon: datetime) -> int:
    """An upper bound on the candidates dateutil generates for `recur` from `dtstart` up to
    `horizon` (it always starts at DTSTART, whatever range is asked for)."""
    freq = rrule_cost.frequency(recur)
    if freq is None:
        return 0
    start = as_datetime(dtstart, UTC)
    until = rrule_cost.first(recur, "UNTIL")
    if until is not None:
        horizon = min(horizon, as_datetime(until, UTC))
    if horizon <= start:
        return 1
    step = rrule_cost.PERIOD[freq] * rrule_cost.interval(recur)
    periods = int((horizon - start).total_seconds() // step) + 1
    count = rrule_cost.first(recur, "COUNT")
    if count is not None and not any(k.startswith("BY") for k in recur):
        periods = min(periods, int(count))
    return periods * rrule_cost.per_period(recur)


def _name(component: icalendar.cal.Component) -> str:
    summary = str(component.get("SUMMARY", "") or "(no title)")[:80]
    return f'"{summary}" (uid {str(component.get("UID", ""))[:80]})'


def _too_dense(calendar: icalendar.Calendar, end: datetime) -> str | None:
    for event in calendar.walk("VEVENT"):
        start = event.get("DTSTART")
        rules = event.get("RRULE")
        if start is None or rules is None:
            continue
        for recur in rules if isinstance(rules, list) else [rules]:
            steps = rule_steps(recur, start.dt, end)
            if steps > MAX_STEPS:
                rule = recur.to_ical().decode()[:120]
                return (
                    f"{_name(event)} repeats too often to expand ({rule}, about {steps:,} repetitions "
                    f"from its start to the end of the range; the limit is {MAX_STEPS:,}): listed once "
                    "as its series, not per occurrence"
                )
    return None


def _master(calendar: icalendar.Calendar) -> icalendar.cal.Component | None:
    events = list(calendar.walk("VEVENT"))
    return next((e for e in events if "RECURRENCE-ID" not in e), events[0] if events else None)


def _expand_one(
    calendar: icalendar.Calendar, start: datetime, end: datetime, room: int, deadline: float
) -> tuple[Occurrences, str | None]:
    recurs = any("RRULE" in c or "RDATE" in c for c in calendar.walk("VEVENT"))
    dense = _too_dense(calendar, end)
    if dense is not None:
        master = _master(calendar)
        return ([(master, True)] if master is not None else []), dense
    query = recurring_ical_events.of(calendar, components=["VEVENT"])
    found: Occurrences = []
    cap = min(MAX_PER_EVENT, room)
    for series in query.series:
        for occurrence in series.between(start, end):
            if len(found) >= cap or time.monotonic() > deadline:
                master = _master(calendar)
                why = "per event" if cap == MAX_PER_EVENT else "per listing"
                if time.monotonic() > deadline:
                    why = f"within {DEADLINE_SECONDS:g} s"
                name = _name(master) if master is not None else "an event"
                return found, f"{name}: only the first {len(found)} occurrences are listed (limit {why})"
            found.append((occurrence.as_component(query.keep_recurrence_attributes), recurs))
    return found, None


def _expand_sync(
    objects: Sequence[str], start: datetime, end: datetime, out: Expanded, deadline: float
) -> None:
    """Fill `out` object by object (the caller may take it as it is at the deadline)."""
    if not _running.acquire(timeout=max(0.0, deadline - time.monotonic())):
        return  # the others took the time: every object is reported as not expanded
    try:
        _expand_each(objects, start, end, out, deadline)
    finally:
        _running.release()


def _expand_each(
    objects: Sequence[str], start: datetime, end: datetime, out: Expanded, deadline: float
) -> None:
    room = MAX_PER_CALL
    for index, ics in enumerate(objects):
        if room <= 0 or time.monotonic() > deadline:
            return
        try:
            occurrences, note = _expand_one(load(ics), start, end, room, deadline)
        except (InvalidInput, ValueError, TypeError, KeyError, OverflowError, AttributeError) as exc:
            occurrences, note = [], f"a calendar object could not be read and is left out ({str(exc)[:120]})"
        room -= len(occurrences)
        out.occurrences[index] = occurrences
        if note:
            out.notes.append(note)


async def expand(objects: Sequence[str], start: datetime, end: datetime) -> Expanded:
    """The occurrences of each iCalendar object in [start, end), bounded (see module doc)."""
    out = Expanded(occurrences=[None] * len(objects))
    if not objects:
        return out
    deadline = time.monotonic() + DEADLINE_SECONDS
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    lock = threading.Lock()
    finished = False
    failure: list[BaseException] = []

    def work() -> None:
        nonlocal finished
        try:
            try:
                _expand_sync(objects, start, end, out, deadline)
            except _Stop:
                pass
            except Exception as exc:  # reported on the loop side
                failure.append(exc)
            with lock:
                finished = True
            loop.call_soon_threadsafe(done.set)
        except _Stop:  # delivered late, after the work: nothing left to stop
            pass
        except RuntimeError:  # the loop closed meanwhile
            pass

    thread = threading.Thread(target=work, name="recurrence-expansion", daemon=True)
    thread.start()
    try:
        await asyncio.wait_for(done.wait(), timeout=DEADLINE_SECONDS + 0.5)
    except TimeoutError:
        with lock:
            if not finished and thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread.ident), ctypes.py_object(_Stop)
                )
    if failure:
        raise failure[0]
    out = Expanded(occurrences=list(out.occurrences), notes=list(out.notes))  # the worker may still run
    missing = sum(1 for o in out.occurrences if o is None)
    if missing:
        out.notes.append(
            f"{missing} calendar object(s) were not expanded: the listing stopped at its limit "
            f"({MAX_PER_CALL} occurrences or {DEADLINE_SECONDS:g} s); ask for a shorter range"
        )
    return out
