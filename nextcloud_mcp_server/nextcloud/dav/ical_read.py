"""iCalendar read: the facts a model needs about an event, an occurrence or a task, and the
occurrences of a recurring event in a window (by `recurring-ical-events`, never by hand)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import icalendar
import recurring_ical_events

from nextcloud_mcp_server.nextcloud.dav.ical import Moment, _prop, iso, load
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = ["event_view", "expand_events", "text", "todo_view"]


def text(component: icalendar.cal.Component, name: str) -> str | None:
    value = component.get(name)
    return str(value) if value is not None else None


def _reminders(component: icalendar.cal.Component) -> list[int]:
    minutes = []
    for alarm in component.walk("VALARM"):
        trigger = _prop(alarm, "TRIGGER")
        if trigger is not None and isinstance(trigger.dt, timedelta):
            minutes.append(int(-trigger.dt.total_seconds() // 60))
    return sorted(minutes)


def _attendees(component: icalendar.cal.Component) -> list[dict[str, str | None]]:
    raw = _prop(component, "ATTENDEE")
    values = raw if isinstance(raw, list) else [raw] if raw is not None else []
    return [
        {
            "email": str(a).removeprefix("mailto:").removeprefix("MAILTO:"),
            "name": a.params.get("CN"),
            "status": a.params.get("PARTSTAT"),
        }
        for a in values
    ]


def _tzid(moment: Moment) -> str | None:
    if isinstance(moment, datetime) and moment.tzinfo is not None:
        key = getattr(moment.tzinfo, "key", None)
        return str(key) if key else moment.tzname()
    return None


# What reading a property another client wrote may raise: icalendar's BrokenCalendarProperty (a
# ValueError) for a value of the wrong form, OverflowError for a date past year 9999 (a DTSTART
# on 9999-12-31 with a day's duration), AttributeError for a DTSTART that is missing.
_UNREADABLE = (ValueError, OverflowError, AttributeError, TypeError)


def _unreadable(exc: Exception) -> InvalidInput:
    return InvalidInput(f"the calendar object could not be read: {str(exc)[:160]}")


def event_view(component: icalendar.cal.Component, *, recurring: bool) -> dict[str, Any]:
    """The facts a model needs about one event or occurrence (`InvalidInput` if unreadable)."""
    try:
        return _event_view(component, recurring=recurring)
    except _UNREADABLE as exc:
        raise _unreadable(exc) from None


def todo_view(component: icalendar.cal.Component) -> dict[str, Any]:
    """The facts a model needs about one task (`InvalidInput` if unreadable)."""
    try:
        return _todo_view(component)
    except _UNREADABLE as exc:
        raise _unreadable(exc) from None


def _event_view(component: icalendar.cal.Component, *, recurring: bool) -> dict[str, Any]:
    start = _prop(component, "DTSTART").dt
    end_prop = _prop(component, "DTEND")
    if end_prop is not None:
        end = end_prop.dt
    elif "DURATION" in component:
        end = start + _prop(component, "DURATION").dt
    else:
        end = start + timedelta(days=1) if not isinstance(start, datetime) else start
    recurrence_id = _prop(component, "RECURRENCE-ID")
    rule = _prop(component, "RRULE")
    return {
        "uid": str(component.get("UID", "")),
        "summary": text(component, "SUMMARY") or "",
        "start": iso(start),
        "end": iso(end),
        "all_day": not isinstance(start, datetime),
        "timezone": _tzid(start),
        "location": text(component, "LOCATION"),
        "description": text(component, "DESCRIPTION"),
        "status": text(component, "STATUS"),
        "recurrence": rule.to_ical().decode() if rule is not None else None,
        "recurring": recurring,
        "occurrence": iso(recurrence_id.dt) if recurring and recurrence_id is not None else None,
        "reminders": _reminders(component),
        "attendees": _attendees(component),
    }


def _todo_view(component: icalendar.cal.Component) -> dict[str, Any]:
    due = _prop(component, "DUE")
    completed_at = _prop(component, "COMPLETED")
    categories = _prop(component, "CATEGORIES")
    cats: list[str] = []
    for entry in categories if isinstance(categories, list) else [categories] if categories else []:
        cats += [str(c) for c in entry.cats if str(c).strip()]  # Deck writes an empty CATEGORIES:
    status = (text(component, "STATUS") or "NEEDS-ACTION").upper()
    return {
        "uid": str(component.get("UID", "")),
        "summary": text(component, "SUMMARY") or "",
        "status": status,
        "completed": status == "COMPLETED",
        "completed_at": iso(completed_at.dt) if completed_at is not None else None,
        "due": iso(due.dt) if due is not None else None,
        "priority": int(_prop(component, "PRIORITY")) if "PRIORITY" in component else None,
        "percent_complete": int(_prop(component, "PERCENT-COMPLETE"))
        if "PERCENT-COMPLETE" in component
        else None,
        "description": text(component, "DESCRIPTION"),
        "categories": cats,
    }


def expand_events(ics: str, start: datetime, end: datetime) -> list[tuple[icalendar.cal.Component, bool]]:
    """Occurrences of the events in one object that overlap [start, end), with whether the
    event recurs. Overrides (RECURRENCE-ID) and exclusions (EXDATE) are honoured."""
    calendar = load(ics)
    recurs = any("RRULE" in c or "RDATE" in c for c in calendar.walk("VEVENT"))
    occurrences = recurring_ical_events.of(calendar, components=["VEVENT"]).between(start, end)
    return [(o, recurs) for o in occurrences]
