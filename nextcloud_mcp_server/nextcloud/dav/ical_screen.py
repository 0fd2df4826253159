"""Calendar objects that cannot have an occurrence before a date, told from their content lines.

Nextcloud 29 answers a week's REPORT with HTTP 500 when a rule repeats more than 3,500 times
before the week (ADR 0050), and the events are then read from the week on (`caldav.py`): every
later event of the calendar comes too (648 objects for this week of the benchmark's ten-year
calendar), each parsed only to find that it starts after the week: about 0.5 ms each with
icalendar's parser, 0.05 ms with its line splitter alone, which this uses.

An object is left out only when nothing in it can repeat or be moved (no RRULE, RDATE, EXDATE or
RECURRENCE-ID), it holds one VEVENT and nothing but alarms besides, and its DTSTART's date is
after the bound. The bound is compared by date, whatever DTSTART's zone: the caller gives it a
day past the range, which is more than any zone's offset. Anything else (a time zone
definition, a line or value that does not read) is kept, to be parsed and filtered as before.
"""

from __future__ import annotations

from datetime import date

from icalendar.parser import Contentline, Contentlines

from nextcloud_mcp_server.numbers import ascii_digits

__all__ = ["starts_after"]

_REPEATING = frozenset({"RRULE", "RDATE", "EXDATE", "RECURRENCE-ID", "EXRULE"})
_ALLOWED = ("VCALENDAR", "VEVENT", "VALARM")


def starts_after(ics: str, bound: date) -> bool:
    """True only when `ics` is one plain VEVENT (alarms allowed) whose DTSTART's date is after
    `bound`: it has no occurrence on or before that date."""
    try:
        lines = Contentlines.from_ical(ics)  # type: ignore[no-untyped-call]  # icalendar leaves it unannotated
    except ValueError:
        return False
    open_components: list[str] = []
    events = 0
    start: str | None = None
    for line in lines:
        if not line:
            continue
        name, _, value = line.partition(":")
        name = name.partition(";")[0].upper()
        if name in _REPEATING:
            return False
        if name == "BEGIN":
            component = value.strip().upper()
            if component not in _ALLOWED:
                return False
            events += component == "VEVENT"
            open_components.append(component)
        elif name == "END":
            if not open_components or open_components.pop() != value.strip().upper():
                return False
        elif name == "DTSTART" and open_components == ["VCALENDAR", "VEVENT"]:
            if start is not None:
                return False
            start = line
    if events != 1 or open_components or start is None:
        return False
    first = _date(start)
    return first is not None and first > bound


def _date(line: str) -> date | None:
    """The date of a DTSTART line (`20270818T014500Z`, `20270818T014500`, `20270818`), or None."""
    try:
        value = str(Contentline(line).parts()[2]).strip()  # type: ignore[no-untyped-call]
    except ValueError:
        return None
    digits = value[:8]
    if len(digits) != 8 or not ascii_digits(digits):
        return None
    if len(value) > 8 and value[8] != "T":
        return None
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return None
