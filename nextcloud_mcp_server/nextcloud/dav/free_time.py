"""Free time: which occurrences make someone busy, and the free windows within working hours
that they leave."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, time, timedelta, tzinfo

import icalendar

from nextcloud_mcp_server.nextcloud.dav.ical import as_datetime, parse_moment
from nextcloud_mcp_server.nextcloud.dav.ical_read import event_view, text
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = ["busy_intervals", "free_slots"]


def busy_intervals(
    occurrences: Iterable[icalendar.cal.Component], tz: tzinfo
) -> list[tuple[datetime, datetime]]:
    """Busy time: cancelled and transparent events are free; all-day events are free unless
    they are explicitly marked opaque (holidays and birthdays usually are not)."""
    busy = []
    for occurrence in occurrences:
        if (text(occurrence, "STATUS") or "").upper() == "CANCELLED":
            continue
        transparency = (text(occurrence, "TRANSP") or "").upper()
        # an occurrence that cannot be read fails the question (InvalidInput, naming why): left
        # out, its time would be offered as free
        view = event_view(occurrence, recurring=False)
        if transparency == "TRANSPARENT" or (view["all_day"] and transparency != "OPAQUE"):
            continue
        busy.append(
            (
                as_datetime(parse_moment(view["start"], tz), tz),
                as_datetime(parse_moment(view["end"], tz), tz),
            )
        )
    return sorted(busy)


def free_slots(
    busy: list[tuple[datetime, datetime]],
    *,
    start: datetime,
    end: datetime,
    duration: timedelta,
    day_start: time,
    day_end: time,
    tz: tzinfo,
    weekdays: set[int],
) -> list[tuple[datetime, datetime]]:
    """Free windows of at least `duration` within working hours (in `tz`) on `weekdays`
    (0 = Monday), between `start` and `end`."""
    if day_end <= day_start:
        raise InvalidInput("working hours must end after they start")
    slots = []
    day = start.astimezone(tz).date()
    while datetime.combine(day, time.min, tzinfo=tz) < end:
        if day.weekday() in weekdays:
            window_start = max(datetime.combine(day, day_start, tzinfo=tz), start)
            window_end = min(datetime.combine(day, day_end, tzinfo=tz), end)
            cursor = window_start
            for busy_start, busy_end in busy:
                if busy_end <= cursor or busy_start >= window_end:
                    continue
                if busy_start - cursor >= duration:
                    slots.append((cursor, busy_start))
                cursor = max(cursor, busy_end)
            if window_end - cursor >= duration:
                slots.append((cursor, window_end))
        day += timedelta(days=1)
    return slots
