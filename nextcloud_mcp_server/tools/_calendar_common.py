"""What the event and task tools share: the toolset, time parsing, calendar choice.

The iCalendar libraries are imported on first use (`ical()`), not when the server starts.
"""

from __future__ import annotations

from datetime import tzinfo
from types import ModuleType
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.models import Calendar
from nextcloud_mcp_server.tools._context import runtime_of
from nextcloud_mcp_server.tools._registry import Toolset

__all__ = ["CalendarId", "TimezoneName", "Uid", "choose_calendar", "ical", "time_zone", "toolset"]

toolset = Toolset("calendar")

CalendarId = Annotated[str, Field(description="Calendar id from nc_calendar_list_calendars, e.g. 'personal'")]
Uid = Annotated[str, Field(min_length=1, description="The uid from a listing")]
TimezoneName = Annotated[
    str | None,
    Field(description="IANA time zone for times given without an offset (default: DEFAULT_TIMEZONE)"),
]


def ical() -> ModuleType:
    from nextcloud_mcp_server.nextcloud import ical as module

    return module


def time_zone(ctx: Context[Any, Any], name: str | None) -> tzinfo:
    zone: tzinfo = ical().zone(name or runtime_of(ctx).settings.default_timezone)
    return zone


def choose_calendar(calendars: list[Calendar], wanted: str | None, component: str) -> Calendar:
    """The calendar to write to: the one asked for, else the first writable one for `component`
    (Nextcloud's 'personal' when there is one)."""
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
        raise InvalidInput(f"there is no writable calendar for {kind}")
    return next((c for c in usable if c.id == "personal"), usable[0])
