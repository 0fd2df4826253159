"""What the event, free-time and task tools share: the toolset, time parsing and ranges, calendar
choice, reading the events of a range.

The iCalendar libraries are imported on first use (`ical()`), not when the server starts.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, tzinfo
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.nextcloud.models import Calendar, CalendarObject
from nextcloud_mcp_server.tools._approval import refuse_changed
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.tools._registry import Toolset

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient

__all__ = [
    "MAX_RANGE",
    "CalendarId",
    "TimezoneName",
    "Uid",
    "choose_calendar",
    "delete_version",
    "event_range",
    "events_in",
    "free_time",
    "ical",
    "ical_read",
    "recurrence",
    "spoken_span",
    "time_zone",
    "toolset",
]

toolset = Toolset("calendar")

CalendarId = Annotated[str, Field(description="Calendar id from nc_calendar_list_calendars, e.g. 'personal'")]
Uid = Annotated[str, Field(min_length=1, description="The uid from a listing")]
TimezoneName = Annotated[
    str | None,
    Field(description="IANA time zone for times given without an offset (default: DEFAULT_TIMEZONE)"),
]


def ical() -> ModuleType:
    from nextcloud_mcp_server.nextcloud.dav import ical as module

    return module


def ical_read() -> ModuleType:
    from nextcloud_mcp_server.nextcloud.dav import ical_read as module

    return module


def free_time() -> ModuleType:
    from nextcloud_mcp_server.nextcloud.dav import free_time as module

    return module


def recurrence() -> ModuleType:
    from nextcloud_mcp_server.nextcloud.dav import recurrence as module

    return module


def time_zone(ctx: Context[Any, Any], name: str | None) -> tzinfo:
    zone: tzinfo = ical().zone(name or runtime_of(ctx).settings.default_timezone)
    return zone


def choose_calendar(calendars: list[Calendar], wanted: str | None, component: str) -> Calendar:
    """The calendar to write to: the one asked for, else the user's default calendar when it
    holds `component`, else 'personal', else the first writable one that does."""
    kind = "events" if component == "VEVENT" else "tasks"
    if wanted is not None:
        for calendar in calendars:
            if wanted in (calendar.id, calendar.display_name):
                if component not in calendar.components:
                    raise InvalidInput(f"calendar '{calendar.id}' does not hold {kind}")
                if not calendar.writable:
                    raise InvalidInput(f"calendar '{calendar.id}' is read-only for you")
                return calendar
        known = ", ".join(c.id for c in calendars) or "none"
        raise InvalidInput(f"no calendar '{wanted}'; the calendars are: {known}")
    usable = [c for c in calendars if c.writable and component in c.components]
    if not usable:
        raise InvalidInput(
            f"you have no calendar for {kind} yet (Nextcloud makes the default one at the first "
            "login in a browser): log in to Nextcloud's web page once, or create a calendar there "
            "(Calendar app), then ask again"
        )
    return next((c for c in usable if c.default), next((c for c in usable if c.id == "personal"), usable[0]))


async def delete_version(
    ctx: Context[Any, Any], href: str, etag: str, *, asked: bool, tool: str, target: str
) -> None:
    """Delete exactly the version that was read (If-Match). If the human approved that version and
    it changed meanwhile, the refusal says so; nothing newer is ever deleted."""
    try:
        await (await nextcloud_for(ctx)).caldav.delete(href, etag=etag or None)
    except PreconditionFailed:
        if asked:
            await refuse_changed(ctx, tool=tool, target=target)
        raise


def spoken_span(view: dict[str, Any]) -> str:
    """When an event happens, the way a person reads it: 'on Fri 04 Dec 2026, 09:00-09:30 (UTC)'."""
    start, end = datetime.fromisoformat(view["start"]), datetime.fromisoformat(view["end"])
    if view["all_day"]:
        last = end - timedelta(days=1)
        if last.date() > start.date():
            return f"from {start:%a %d %b %Y} to {last:%a %d %b %Y} (all day)"
        return f"on {start:%a %d %b %Y} (all day)"
    zone = view.get("timezone") or "floating time, no time zone"
    if start.date() == end.date():
        return f"on {start:%a %d %b %Y}, {start:%H:%M}-{end:%H:%M} ({zone})"
    return f"from {start:%a %d %b %Y %H:%M} to {end:%a %d %b %Y %H:%M} ({zone})"


MAX_RANGE = timedelta(days=731)


def event_range(
    ctx: Context[Any, Any], start: str, end: str, timezone: str | None
) -> tuple[datetime, datetime, tzinfo]:
    tz = time_zone(ctx, timezone)
    lower = ical().as_datetime(ical().parse_moment(start, tz), tz)
    upper = ical().as_datetime(ical().parse_moment(end, tz), tz)
    if upper <= lower:
        raise InvalidInput("end must be after start")
    if upper - lower > MAX_RANGE:
        raise InvalidInput("ask for at most two years at a time")
    return lower, upper, tz


async def events_in(
    ctx: Context[Any, Any], caldav: CalDAVClient, calendars: list[Calendar], lower: datetime, upper: datetime
) -> list[tuple[str, CalendarObject]]:
    """The event objects of `calendars` that may touch [lower, upper), read at once (ADR 0050), with
    progress reported per calendar read to a client that asked for it."""
    chosen = [cal for cal in calendars if "VEVENT" in cal.components]
    done = 0

    async def read(cal: Calendar) -> list[tuple[str, CalendarObject]]:
        nonlocal done
        objects = await caldav.events_between(cal, lower, upper)
        done += 1
        await ctx.report_progress(done, len(chosen), f"read calendar {cal.id}")
        return [(cal.id, obj) for obj in objects]

    return [pair for found in await asyncio.gather(*(read(cal) for cal in chosen)) for pair in found]
