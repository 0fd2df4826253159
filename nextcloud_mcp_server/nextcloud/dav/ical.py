"""iCalendar: building and patching events and tasks, and the moments they hold. Reading them is
in `ical_read.py`, free time in `free_time.py`.

Parsing and recurrence are done by `icalendar` and `recurring-ical-events` (RRULE, RDATE, EXDATE
and RECURRENCE-ID overrides), never by hand. Patching edits the parsed object in place and
re-serialises it, so properties this server does not model (X- properties, alarms, attendees,
overrides, categories) survive an update untouched.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
from dateutil import rrule as dateutil_rrule

from nextcloud_mcp_server.nextcloud.dav import rrule_cost
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.models import FIRST_YEAR, LAST_YEAR
from nextcloud_mcp_server.nextcloud.names import check_visible

__all__ = [
    "Attendee",
    "EventChanges",
    "TodoChanges",
    "build_event",
    "build_todo",
    "load",
    "master",
    "new_uid",
    "parse_moment",
    "patch_event",
    "patch_todo",
    "zone",
]

PRODID = "-//nextcloud-mcp-server//EN"
Moment = date | datetime


def _prop(component: Any, name: str) -> Any:
    """A property's value (icalendar types it as a wide union; callers know what they read)."""
    return component.get(name)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones ("America")
        raise InvalidInput(
            f"unknown time zone '{name[:80]}' (use an IANA name such as Europe/Berlin)"
        ) from None


MAX_REMINDER_MINUTES = 366 * 24 * 60


def parse_moment(text: str, tz: tzinfo) -> Moment:
    """'2026-11-23' is a date; '2026-11-23T10:00' is a time in `tz`; an offset or 'Z' wins."""
    value = text.strip()
    moment: Moment
    try:
        if len(value) == 10:
            moment = date.fromisoformat(value)
        else:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"'{text[:80]}' is not an ISO 8601 date or date-time (e.g. 2026-11-23T10:00)"
        ) from None
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise InvalidInput(f"dates are from the year {FIRST_YEAR} to {LAST_YEAR} (got '{text[:40]}')")
    if isinstance(moment, datetime) and moment.tzinfo is None:
        return moment.replace(tzinfo=tz)
    return moment


def as_datetime(moment: Moment, tz: tzinfo) -> datetime:
    """A date becomes midnight in `tz`; a naive datetime (floating time) is read in `tz`."""
    if isinstance(moment, datetime):
        return moment if moment.tzinfo else moment.replace(tzinfo=tz)
    return datetime.combine(moment, time.min, tzinfo=tz)


def iso(moment: Moment | None) -> str | None:
    if moment is None:
        return None
    return moment.isoformat()


def new_uid() -> str:
    return f"{uuid.uuid4()}"


def load(ics: str) -> icalendar.Calendar:
    try:
        return icalendar.Calendar.from_ical(ics)
    except ValueError as exc:
        raise InvalidInput(f"the calendar object does not parse: {str(exc)[:200]}") from None


def master(calendar: icalendar.Calendar, kind: str) -> icalendar.cal.Component:
    """The main component of an object (the one without RECURRENCE-ID)."""
    components = [c for c in calendar.walk(kind)]
    for component in components:
        if "RECURRENCE-ID" not in component:
            return component
    if components:
        return components[0]
    raise InvalidInput(f"the calendar object has no {kind}")


@dataclass
class Attendee:
    email: str
    name: str | None = None


@dataclass
class EventChanges:
    """What to set on an event; None leaves a property as it is."""

    summary: str | None = None
    start: Moment | None = None
    end: Moment | None = None
    location: str | None = None
    description: str | None = None
    rrule: str | None = None  # '' removes the recurrence
    reminders: list[int] | None = None  # minutes before the start; [] removes all
    attendees: list[Attendee] | None = None
    status: str | None = None


@dataclass
class TodoChanges:
    summary: str | None = None
    due: Moment | None = None
    clear_due: bool = False
    description: str | None = None
    priority: int | None = None
    completed: bool | None = None
    percent_complete: int | None = None
    categories: list[str] | None = field(default=None)


def _replace(component: icalendar.cal.Component, name: str, value: Any) -> None:
    if name in component:
        del component[name]
    if value is not None and value != "":
        component.add(name, value)


def _check_rrule(rule: str, start: Moment) -> icalendar.vRecur:
    text = rule.strip().removeprefix("RRULE:")
    try:
        recur: icalendar.vRecur = icalendar.vRecur.from_ical(text)
        dateutil_rrule.rrulestr(text, dtstart=as_datetime(start, UTC))
    except (ValueError, TypeError):
        raise InvalidInput(f"'{rule}' is not a valid RRULE (e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10)") from None
    daily = rrule_cost.per_day(recur)
    if daily > rrule_cost.MAX_ENDLESS_PER_DAY and not recur.get("COUNT") and not recur.get("UNTIL"):
        raise InvalidInput(
            f"a rule repeating up to {daily:,.0f} times a day (more than {rrule_cost.MAX_ENDLESS_PER_DAY}, "
            "hourly) needs an end (COUNT=n or UNTIL=...): without one it repeats endlessly and no "
            "calendar can list it"
        )
    return recur


def _check_span(start: Moment, end: Moment) -> None:
    if isinstance(start, datetime) != isinstance(end, datetime):
        raise InvalidInput("start and end must both be dates (all-day) or both date-times")
    if end <= start:
        raise InvalidInput("end must be after start")


def _stamp(component: icalendar.cal.Component) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    _replace(component, "DTSTAMP", now)
    _replace(component, "LAST-MODIFIED", now)


def _apply_event(component: icalendar.cal.Component, changes: EventChanges) -> None:
    if changes.summary is not None:
        check_visible(changes.summary, "summary")
        _replace(component, "SUMMARY", changes.summary)
    if changes.location is not None:
        _replace(component, "LOCATION", changes.location)
    if changes.description is not None:
        _replace(component, "DESCRIPTION", changes.description)
    if changes.status is not None:
        _replace(component, "STATUS", changes.status.upper())
    if changes.start is not None or changes.end is not None:
        old_start, old_end = _prop(component, "DTSTART"), _prop(component, "DTEND")
        start = changes.start if changes.start is not None else old_start.dt
        if changes.end is not None:
            end = changes.end
        elif old_start is not None and old_end is not None:
            end = start + (old_end.dt - old_start.dt)  # moving keeps the duration
        elif "DURATION" in component:
            end = start + _prop(component, "DURATION").dt
        else:
            end = start + (timedelta(days=1) if not isinstance(start, datetime) else timedelta(hours=1))
        _check_span(start, end)
        _replace(component, "DURATION", None)
        _replace(component, "DTSTART", start)
        _replace(component, "DTEND", end)
    if changes.rrule is not None:
        rule = _check_rrule(changes.rrule, _prop(component, "DTSTART").dt) if changes.rrule.strip() else None
        _replace(component, "RRULE", rule)
    if changes.reminders is not None:
        component.subcomponents = [c for c in component.subcomponents if c.name != "VALARM"]
        for minutes in sorted(set(changes.reminders)):
            if not 0 <= minutes <= MAX_REMINDER_MINUTES:  # 10**15 overflowed timedelta
                raise InvalidInput("reminders are minutes before the start, 0 to 527040 (a year)")
            alarm = icalendar.Alarm()
            alarm.add("ACTION", "DISPLAY")
            alarm.add("DESCRIPTION", str(component.get("SUMMARY", "Reminder")))
            alarm.add("TRIGGER", timedelta(minutes=-minutes))
            component.add_component(alarm)
    if changes.attendees is not None:
        _replace(component, "ATTENDEE", None)
        for person in changes.attendees:
            if "@" not in person.email or any(c in person.email for c in " \r\n<>"):
                raise InvalidInput(f"'{person.email}' is not an e-mail address")
            address = icalendar.vCalAddress(f"mailto:{person.email}")
            if person.name:
                address.params["CN"] = person.name
            address.params["ROLE"] = "REQ-PARTICIPANT"
            address.params["PARTSTAT"] = "NEEDS-ACTION"
            address.params["RSVP"] = "TRUE"
            component.add("ATTENDEE", address, encode=False)


def _serialise(calendar: icalendar.Calendar) -> str:
    calendar.add_missing_timezones()
    return str(calendar.to_ical().decode("utf-8"))


def _new_calendar(component: icalendar.cal.Component) -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("PRODID", PRODID)
    calendar.add("VERSION", "2.0")
    calendar.add_component(component)
    return calendar


def build_event(uid: str, changes: EventChanges) -> str:
    if not changes.summary or changes.start is None:
        raise InvalidInput("an event needs a summary and a start")
    event = icalendar.Event()
    event.add("UID", uid)
    event.add("SEQUENCE", 0)
    _stamp(event)
    _apply_event(event, changes)
    return _serialise(_new_calendar(event))


def patch_event(ics: str, changes: EventChanges) -> str:
    calendar = load(ics)
    event = master(calendar, "VEVENT")
    _apply_event(event, changes)
    _replace(event, "SEQUENCE", int(event.get("SEQUENCE", 0)) + 1)
    _stamp(event)
    return _serialise(calendar)


def _apply_todo(component: icalendar.cal.Component, changes: TodoChanges) -> None:
    if changes.summary is not None:
        check_visible(changes.summary, "summary")
        _replace(component, "SUMMARY", changes.summary)
    if changes.description is not None:
        _replace(component, "DESCRIPTION", changes.description)
    if changes.clear_due:
        _replace(component, "DUE", None)
    elif changes.due is not None:
        _replace(component, "DUE", changes.due)
    if changes.priority is not None:
        if not 0 <= changes.priority <= 9:
            raise InvalidInput("priority is 1 (highest) to 9 (lowest), or 0 for none")
        _replace(component, "PRIORITY", changes.priority)
    if changes.categories is not None:
        _replace(component, "CATEGORIES", None)
        if changes.categories:
            component.add("CATEGORIES", changes.categories)
    if changes.percent_complete is not None:
        if not 0 <= changes.percent_complete <= 100:
            raise InvalidInput("percent_complete is 0 to 100")
        _replace(component, "PERCENT-COMPLETE", changes.percent_complete)
    if changes.completed is True:
        _replace(component, "STATUS", "COMPLETED")
        _replace(component, "COMPLETED", datetime.now(UTC).replace(microsecond=0))
        _replace(component, "PERCENT-COMPLETE", 100)
    elif changes.completed is False:
        _replace(component, "STATUS", "NEEDS-ACTION")
        _replace(component, "COMPLETED", None)
        if int(component.get("PERCENT-COMPLETE", 0)) == 100:
            _replace(component, "PERCENT-COMPLETE", 0)


def build_todo(uid: str, changes: TodoChanges) -> str:
    if not changes.summary:
        raise InvalidInput("a task needs a summary")
    todo = icalendar.Todo()
    todo.add("UID", uid)
    todo.add("STATUS", "NEEDS-ACTION")
    todo.add("CREATED", datetime.now(UTC).replace(microsecond=0))
    _stamp(todo)
    _apply_todo(todo, changes)
    return _serialise(_new_calendar(todo))


def patch_todo(ics: str, changes: TodoChanges) -> str:
    calendar = load(ics)
    todo = master(calendar, "VTODO")
    _apply_todo(todo, changes)
    _stamp(todo)
    return _serialise(calendar)
