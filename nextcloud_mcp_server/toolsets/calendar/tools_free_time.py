"""The Calendar toolset's free time: the slots within working hours that your busy events leave."""

from __future__ import annotations

from datetime import time, timedelta
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.calendar.tools_common import (
    TimezoneName,
    event_range,
    events_in,
    free_time,
    recurrence,
    toolset,
)
from nextcloud_mcp_server.views import AGENDA

__all__ = ["toolset"]


class Slot(BaseModel):
    start: str
    end: str
    minutes: int


class Availability(BaseModel):
    timezone: str
    slots: list[Slot]
    notes: list[str] = Field(
        default_factory=list, description="Events that were not fully expanded: the slots may be wrong"
    )


def _clock(text: str, name: str) -> time:
    try:
        return time.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{name} must be a time like 09:00") from None


@toolset.tool(title="Find free time", read_only=True, view=AGENDA)
@require_scopes(CALENDAR_READ)
async def nc_calendar_find_availability(
    start: Annotated[str, Field(description="Search from (ISO 8601)")],
    end: Annotated[str, Field(description="Search until (ISO 8601)")],
    duration_minutes: Annotated[int, Field(ge=5, le=24 * 60)],
    ctx: Context[Any, Any],
    working_hours_start: str = "09:00",
    working_hours_end: str = "17:00",
    working_days: Annotated[list[int], Field(description="ISO weekdays, 1 = Monday")] = [1, 2, 3, 4, 5],  # noqa: B006
    calendars: Annotated[list[str] | None, Field(description="Calendars to consider (default all)")] = None,
    timezone: TimezoneName = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> Availability:
    """Free slots of at least `duration_minutes` within working hours, given your busy events
    (cancelled, transparent and all-day events do not block time)."""
    lower, upper, tz = event_range(ctx, start, end, timezone)
    if any(not 1 <= d <= 7 for d in working_days):
        raise InvalidInput("working_days are ISO weekdays, 1 (Monday) to 7 (Sunday)")
    day_start = _clock(working_hours_start, "working_hours_start")
    day_end = _clock(working_hours_end, "working_hours_end")
    caldav = (await nextcloud_for(ctx)).caldav
    chosen = (
        [await caldav.calendar(c, find_default=False) for c in calendars]
        if calendars
        else await caldav.calendars(find_default=False)
    )
    objects = [obj.ics for _, obj in await events_in(ctx, caldav, chosen, lower, upper)]
    expanded = await recurrence().expand(objects, lower, upper)
    occurrences = [o for found in expanded.occurrences for o, _ in found or []]
    slots = free_time().free_slots(
        free_time().busy_intervals(occurrences, tz),
        start=lower,
        end=upper,
        duration=timedelta(minutes=duration_minutes),
        day_start=day_start,
        day_end=day_end,
        tz=tz,
        weekdays={d - 1 for d in working_days},
    )
    return Availability(
        timezone=str(getattr(tz, "key", tz)),
        slots=[
            Slot(start=s.isoformat(), end=e.isoformat(), minutes=int((e - s).total_seconds() // 60))
            for s, e in slots[:limit]
        ],
        notes=expanded.notes,
    )
