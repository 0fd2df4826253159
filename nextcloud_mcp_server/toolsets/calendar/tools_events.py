"""The Calendar toolset's calendars and events (recurring ones expanded). Free time is in
`tools_free_time.py`, tasks in `tools_tasks.py`, what they share in `tools_common.py`."""

from __future__ import annotations

from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, CALENDAR_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.nextcloud.models import CalendarObject
from nextcloud_mcp_server.tools._approval import require_approval, shrinks
from nextcloud_mcp_server.tools._arguments import StrictArguments
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._versions import approve_update, given_etag, removal_question
from nextcloud_mcp_server.toolsets.calendar.tools_common import (
    CalendarId,
    TimezoneName,
    Uid,
    choose_calendar,
    delete_version,
    event_range,
    events_in,
    ical,
    ical_read,
    recurrence,
    spoken_span,
    time_zone,
    toolset,
)
from nextcloud_mcp_server.views import AGENDA, APPROVAL

if TYPE_CHECKING:
    pass

__all__ = ["toolset"]


class CalendarInfo(BaseModel):
    id: str
    name: str
    color: str | None
    supports_events: bool
    supports_tasks: bool
    writable: bool
    default: bool


class CalendarList(BaseModel):
    calendars: list[CalendarInfo]


class AttendeeInput(StrictArguments):
    email: str
    name: str | None = None


class AttendeeInfo(BaseModel):
    email: str
    name: str | None = None
    status: str | None = Field(default=None, description="NEEDS-ACTION, ACCEPTED, DECLINED, TENTATIVE")


class EventInfo(BaseModel):
    uid: str
    calendar: str
    summary: str
    start: str = Field(description="ISO 8601; a date for all-day events")
    end: str = Field(description="ISO 8601; for all-day events the last day (inclusive)")
    all_day: bool
    timezone: str | None
    location: str | None = None
    description: str | None = None
    status: str | None = None
    recurrence: str | None = Field(default=None, description="RRULE of a recurring event")
    recurring: bool = False
    occurrence: str | None = Field(default=None, description="Which occurrence (RECURRENCE-ID)")
    reminders: list[int] = Field(default_factory=list, description="Minutes before the start")
    attendees: list[AttendeeInfo] = Field(default_factory=list)
    etag: str = Field(description="Pass to nc_calendar_update_event")


class EventList(BaseModel):
    events: list[EventInfo]
    truncated: bool = Field(description="More occurrences matched than the limit")
    notes: list[str] = Field(
        default_factory=list, description="Events that were not fully expanded (too many repetitions)"
    )


class DeletedEvent(BaseModel):
    uid: str
    calendar: str
    summary: str
    deleted: bool = True


def _event_info(view: dict[str, Any], calendar: str, etag: str) -> EventInfo:
    if view["all_day"]:
        last_day = date.fromisoformat(view["end"]) - timedelta(days=1)
        view = {**view, "end": max(last_day, date.fromisoformat(view["start"])).isoformat()}
    return EventInfo(**view, calendar=calendar, etag=etag)


def _span(
    start_text: str, end_text: str | None, all_day: bool, tz: tzinfo
) -> tuple[date | datetime, date | datetime]:
    start = ical().parse_moment(start_text, tz)
    end = ical().parse_moment(end_text, tz) if end_text else None
    if all_day or not isinstance(start, datetime):
        first = start.date() if isinstance(start, datetime) else start
        last = (end.date() if isinstance(end, datetime) else end) if end is not None else first
        if last < first:
            raise InvalidInput("the last day must not be before the first day")
        return first, last + timedelta(days=1)  # DTEND of an all-day event is exclusive
    if end is None:
        return start, start + timedelta(hours=1)
    if not isinstance(end, datetime):
        raise InvalidInput("end must be a date-time like start (or set all_day)")
    return start, end


@toolset.tool(title="List calendars", read_only=True)
@require_scopes(CALENDAR_READ)
async def nc_calendar_list_calendars(ctx: Context[Any, Any]) -> CalendarList:
    """List your calendars, your default one first (used when no calendar is named), then those
    you can write to: id, name, colour, whether they hold events and/or tasks, writable."""
    calendars = await (await nextcloud_for(ctx)).caldav.calendars()
    return CalendarList(
        calendars=[
            CalendarInfo(
                id=c.id,
                name=c.display_name,
                color=c.color,
                supports_events="VEVENT" in c.components,
                supports_tasks="VTODO" in c.components,
                writable=c.writable,
                default=c.default,
            )
            for c in calendars
        ]
    )


@toolset.tool(title="List events", read_only=True, view=AGENDA)
@require_scopes(CALENDAR_READ)
async def nc_calendar_list_events(
    start: Annotated[str, Field(description="ISO 8601 date or date-time, e.g. 2026-11-23")],
    end: Annotated[str, Field(description="ISO 8601 date or date-time (exclusive)")],
    ctx: Context[Any, Any],
    calendar: Annotated[str | None, Field(description="Only this calendar (default: all)")] = None,
    timezone: TimezoneName = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> EventList:
    """Events between two times across your calendars, sorted by start. Recurring events are
    expanded into their occurrences in the range (moved or cancelled occurrences honoured)."""
    lower, upper, tz = event_range(ctx, start, end, timezone)
    caldav = (await nextcloud_for(ctx)).caldav
    calendars = (
        [await caldav.calendar(calendar, find_default=False)]
        if calendar
        else await caldav.calendars(find_default=False)
    )
    objects = await events_in(ctx, caldav, calendars, lower, upper)
    expanded = await recurrence().expand([obj.ics for _, obj in objects], lower, upper)
    found: list[tuple[datetime, EventInfo]] = []
    notes = list(expanded.notes)
    for (cal_id, obj), occurrences in zip(objects, expanded.occurrences, strict=True):
        for occurrence, recurs in occurrences or []:
            try:
                info = _event_info(ical_read().event_view(occurrence, recurring=recurs), cal_id, obj.etag)
            except InvalidInput as exc:  # one event another client wrote: the others are shown
                notes.append(f"an event in {cal_id} is left out: {exc}")
                continue
            moment = ical().as_datetime(ical().parse_moment(info.start, tz), tz)
            found.append((moment, info))
    found.sort(key=lambda item: (item[0], item[1].summary))
    return EventList(events=[info for _, info in found[:limit]], truncated=len(found) > limit, notes=notes)


async def _find_event(ctx: Context[Any, Any], calendar: str, uid: str) -> tuple[str, CalendarObject]:
    caldav = (await nextcloud_for(ctx)).caldav
    cal = await caldav.calendar(calendar)
    return cal.id, await caldav.find(cal, uid, "VEVENT")


@toolset.tool(title="Get an event", read_only=True)
@require_scopes(CALENDAR_READ)
async def nc_calendar_get_event(calendar: CalendarId, uid: Uid, ctx: Context[Any, Any]) -> EventInfo:
    """One event, given its calendar and uid, with all its details and its etag (needed to update
    it). For a recurring event this is the series (its first occurrence and its recurrence rule)."""
    cal_id, obj = await _find_event(ctx, calendar, uid)
    component = ical().master(ical().load(obj.ics), "VEVENT")
    recurs = "RRULE" in component or "RDATE" in component
    return _event_info(ical_read().event_view(component, recurring=recurs), cal_id, obj.etag)


@toolset.tool(title="Create an event")
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_create_event(
    summary: Annotated[str, Field(min_length=1)],
    start: Annotated[str, Field(description="ISO 8601 date-time, or a date with all_day")],
    ctx: Context[Any, Any],
    end: Annotated[str | None, Field(description="Default: one hour after start; all-day: last day")] = None,
    all_day: bool = False,
    calendar: Annotated[
        str | None, Field(description="Calendar id (default: your default calendar, listed first)")
    ] = None,
    timezone: TimezoneName = None,
    location: str | None = None,
    description: str | None = None,
    recurrence: Annotated[str | None, Field(description="RRULE, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10")] = None,
    reminders: Annotated[list[int] | None, Field(description="Minutes before the start, e.g. [15]")] = None,
    attendees: list[AttendeeInput] | None = None,
) -> EventInfo:
    """Create an event. Times without an offset are in `timezone`. Attendees are invited by
    Nextcloud when it is set up to send invitations."""
    tz = time_zone(ctx, timezone)
    first, after = _span(start, end, all_day, tz)
    module = ical()
    changes = module.EventChanges(
        summary=summary,
        start=first,
        end=after,
        location=location,
        description=description,
        rrule=recurrence,
        reminders=reminders,
        attendees=[module.Attendee(a.email, a.name) for a in attendees] if attendees else None,
    )
    uid = module.new_uid()
    ics = module.build_event(uid, changes)
    caldav = (await nextcloud_for(ctx)).caldav
    cal = choose_calendar(await caldav.calendars(), calendar, "VEVENT")
    etag = await caldav.put(f"{cal.href}{uid}.ics", ics, create=True)
    component = module.master(module.load(ics), "VEVENT")
    view = ical_read().event_view(component, recurring=bool(recurrence))
    return _event_info(view, cal.id, etag or "")


def _removals(view: dict[str, Any], changes: Any, cal_id: str) -> str | None:
    """What cancelling an event or removing what it says (ADR 0019) would take, as a question."""
    removed = []
    if (changes.status or "").upper() == "CANCELLED" and (view["status"] or "").upper() != "CANCELLED":
        removed.append("cancel it")
    for name in ("summary", "location", "description"):
        if shrinks(view[name], getattr(changes, name)):
            removed.append(f"remove its {name}" if not getattr(changes, name).strip() else f"cut its {name}")
    if changes.rrule is not None and not changes.rrule.strip() and view["recurrence"]:
        removed.append("end its recurrence (every later occurrence goes)")
    if changes.attendees == [] and view["attendees"]:
        removed.append(f"remove its {len(view['attendees'])} attendee(s)")
    where = f" {spoken_span(view)} in calendar '{cal_id}'"
    return removal_question(f'the event "{view["summary"]}"', removed, where)


@toolset.tool(title="Update an event", idempotent=True, view=APPROVAL)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_update_event(
    calendar: CalendarId,
    uid: Uid,
    etag: Annotated[str, Field(description="The etag from nc_calendar_get_event or a listing")],
    ctx: Context[Any, Any],
    summary: str | None = None,
    start: str | None = None,
    end: str | None = None,
    all_day: bool | None = None,
    timezone: TimezoneName = None,
    location: str | None = None,
    description: str | None = None,
    recurrence: Annotated[str | None, Field(description="New RRULE; '' removes the recurrence")] = None,
    reminders: Annotated[list[int] | None, Field(description="Replaces all reminders; [] removes")] = None,
    attendees: Annotated[list[AttendeeInput] | None, Field(description="Replaces the attendee list")] = None,
    status: Annotated[str | None, Field(description="CONFIRMED, TENTATIVE or CANCELLED")] = None,
) -> Annotated[CallToolResult, EventInfo]:
    """Change an event, given its calendar and uid (the whole series for a recurring one). Only
    the fields you pass change; everything else in the event, including properties this tool does
    not know, is kept. If the event changed since you read its etag, nothing is overwritten and
    the current event is returned with the error. Cancelling it, ending its recurrence, removing
    its attendees or emptying its text asks the user first (and is refused at permission level
    write)."""
    etag = given_etag(etag)
    if status is not None and status.upper() not in ("CONFIRMED", "TENTATIVE", "CANCELLED"):
        raise InvalidInput("status must be CONFIRMED, TENTATIVE or CANCELLED")
    tz = time_zone(ctx, timezone)
    module = ical()
    cal_id, obj = await _find_event(ctx, calendar, uid)
    old = ical_read().event_view(module.master(module.load(obj.ics), "VEVENT"), recurring=False)
    new_start: date | datetime | None = None
    new_end: date | datetime | None = None
    if start is not None or end is not None or all_day is not None:
        is_all_day = all_day if all_day is not None else old["all_day"]
        if old["all_day"] and all_day is False and start is None:
            raise InvalidInput("give a start time to turn an all-day event into a timed one")
        if start is not None:
            new_start, new_end = _span(start, end, is_all_day, tz)
            if end is None:
                new_end = None  # keep the event's duration
        elif end is not None:
            new_start, new_end = _span(old["start"], end, is_all_day, tz)
        else:
            new_start, new_end = _span(old["start"], None, is_all_day, tz)
    changes = module.EventChanges(
        summary=summary,
        start=new_start,
        end=new_end,
        location=location,
        description=description,
        rrule=recurrence,
        reminders=reminders,
        attendees=[module.Attendee(a.email, a.name) for a in attendees] if attendees is not None else None,
        status=status,
    )
    ics = module.patch_event(obj.ics, changes)
    caldav = (await nextcloud_for(ctx)).caldav
    try:
        version = await approve_update(
            ctx,
            tool="nc_calendar_update_event",
            target=f'the event "{old["summary"]}"',
            host=caldav.host,
            given=etag,
            current=obj.etag,
            question=_removals(old, changes, cal_id),
        )
        new_etag = await version.write(ctx, lambda if_match: caldav.put(obj.href, ics, etag=if_match))
    except PreconditionFailed as exc:
        current_obj = await caldav.get(obj.href)
        component = module.master(module.load(current_obj.ics), "VEVENT")
        current = _event_info(ical_read().event_view(component, recurring=False), cal_id, current_obj.etag)
        return stale_version(exc, "event", "current_event", current)
    component = module.master(module.load(ics), "VEVENT")
    recurs = "RRULE" in component or "RDATE" in component
    info = _event_info(ical_read().event_view(component, recurring=recurs), cal_id, new_etag or "")
    return answer(info)


@toolset.tool(title="Delete an event", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_delete_event(
    calendar: CalendarId,
    uid: Uid,
    ctx: Context[Any, Any],
    etag: Annotated[str | None, Field(description="Only delete if it is still this version")] = None,
) -> DeletedEvent:
    """Delete an event by its calendar and uid (all occurrences of a recurring one). The user is
    asked to approve first (unless the server is set up not to ask). Pass its etag to delete only
    the version you have seen."""
    etag = given_etag(etag) if etag is not None else None
    cal_id, obj = await _find_event(ctx, calendar, uid)
    if etag is not None and etag != obj.etag:
        host = (await nextcloud_for(ctx)).http.host
        raise PreconditionFailed(host, "the event changed since that etag; nothing was deleted", status=412)
    component = ical().master(ical().load(obj.ics), "VEVENT")
    view = ical_read().event_view(component, recurring="RRULE" in component or "RDATE" in component)
    series = " (every occurrence of this recurring event)" if view["recurring"] else ""
    target = f'the event "{view["summary"]}"'
    question = f"Delete {target} {spoken_span(view)}{series} from calendar '{cal_id}'?"
    asked = await require_approval(
        ctx, tool="nc_calendar_delete_event", target=target, question=question, version=obj.etag
    )
    await delete_version(ctx, obj.href, obj.etag, asked=asked, tool="nc_calendar_delete_event", target=target)
    return DeletedEvent(uid=uid, calendar=cal_id, summary=view["summary"])
