"""Tasks (VTODO, as Nextcloud Tasks uses them), in the calendar toolset."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, CALENDAR_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import PreconditionFailed
from nextcloud_mcp_server.tools._approval import require_approval, shrinks
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._versions import approve_update, given_etag, removal_question
from nextcloud_mcp_server.toolsets.calendar.tools_common import (
    CalendarId,
    TimezoneName,
    Uid,
    choose_calendar,
    delete_version,
    ical,
    ical_read,
    time_zone,
    toolset,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

Priority = Annotated[int | None, Field(ge=0, le=9, description="1 highest .. 9 lowest; 0 none")]


class TodoInfo(BaseModel):
    uid: str
    calendar: str
    summary: str
    status: str = Field(description="NEEDS-ACTION, IN-PROCESS, COMPLETED or CANCELLED")
    completed: bool
    completed_at: str | None = None
    due: str | None = None
    priority: int | None = None
    percent_complete: int | None = None
    description: str | None = None
    categories: list[str] = Field(default_factory=list)
    etag: str = Field(description="Pass to nc_calendar_update_todo")


class TodoList(BaseModel):
    todos: list[TodoInfo]
    truncated: bool


class DeletedTodo(BaseModel):
    uid: str
    calendar: str
    summary: str
    deleted: bool = True


def _info(ics: str, calendar: str, etag: str) -> TodoInfo:
    module = ical()
    return TodoInfo(
        **ical_read().todo_view(module.master(module.load(ics), "VTODO")), calendar=calendar, etag=etag
    )


@toolset.tool(title="List tasks", read_only=True)
@require_scopes(CALENDAR_READ)
async def nc_calendar_list_todos(
    ctx: Context[Any, Any],
    calendar: Annotated[str | None, Field(description="Only this calendar (default: all task lists)")] = None,
    status: Literal["open", "completed", "all"] = "open",
    due_after: Annotated[str | None, Field(description="Only tasks due at or after (ISO 8601)")] = None,
    due_before: Annotated[str | None, Field(description="Only tasks due before (ISO 8601)")] = None,
    timezone: TimezoneName = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> TodoList:
    """Your tasks: open ones by default, soonest due first (tasks without a due date last)."""
    module = ical()
    tz = time_zone(ctx, timezone)
    after = module.as_datetime(module.parse_moment(due_after, tz), tz) if due_after else None
    before = module.as_datetime(module.parse_moment(due_before, tz), tz) if due_before else None
    caldav = (await nextcloud_for(ctx)).caldav
    calendars = (
        [await caldav.calendar(calendar, find_default=False)]
        if calendar
        else await caldav.calendars(find_default=False)
    )
    found: list[TodoInfo] = []
    for cal in calendars:
        if "VTODO" not in cal.components:
            continue
        for obj in await caldav.todos(cal):
            info = _info(obj.ics, cal.id, obj.etag)
            if (status == "open" and info.completed) or (status == "completed" and not info.completed):
                continue
            if status == "open" and info.status == "CANCELLED":
                continue
            if after or before:
                if info.due is None:
                    continue
                due = module.as_datetime(module.parse_moment(info.due, tz), tz)
                if (after and due < after) or (before and due >= before):
                    continue
            found.append(info)
    far = datetime.max.replace(tzinfo=tz)
    found.sort(
        key=lambda t: (
            module.as_datetime(module.parse_moment(t.due, tz), tz) if t.due else far,
            t.priority or 10,
            t.summary,
        )
    )
    return TodoList(todos=found[:limit], truncated=len(found) > limit)


@toolset.tool(title="Create a task")
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_create_todo(
    summary: Annotated[str, Field(min_length=1)],
    ctx: Context[Any, Any],
    calendar: Annotated[str | None, Field(description="Task list id (default: the first one)")] = None,
    due: Annotated[str | None, Field(description="ISO 8601 date or date-time")] = None,
    description: str | None = None,
    priority: Priority = None,
    categories: list[str] | None = None,
    timezone: TimezoneName = None,
) -> TodoInfo:
    """Create a task with an optional due date, priority and categories; it appears in the
    Nextcloud Tasks app."""
    module = ical()
    tz = time_zone(ctx, timezone)
    changes = module.TodoChanges(
        summary=summary,
        due=module.parse_moment(due, tz) if due else None,
        description=description,
        priority=priority,
        categories=categories,
    )
    uid = module.new_uid()
    ics = module.build_todo(uid, changes)
    caldav = (await nextcloud_for(ctx)).caldav
    cal = choose_calendar(await caldav.calendars(), calendar, "VTODO")
    etag = await caldav.put(f"{cal.href}{uid}.ics", ics, create=True)
    return _info(ics, cal.id, etag or "")


@toolset.tool(title="Update a task", idempotent=True, view=APPROVAL)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_update_todo(
    calendar: CalendarId,
    uid: Uid,
    etag: Annotated[str, Field(description="The etag from nc_calendar_list_todos")],
    ctx: Context[Any, Any],
    summary: str | None = None,
    completed: Annotated[bool | None, Field(description="true completes, false reopens")] = None,
    due: Annotated[str | None, Field(description="ISO 8601; '' removes the due date")] = None,
    description: str | None = None,
    priority: Priority = None,
    percent_complete: Annotated[int | None, Field(ge=0, le=100)] = None,
    categories: list[str] | None = None,
    timezone: TimezoneName = None,
) -> Annotated[CallToolResult, TodoInfo]:
    """Change a task, complete it or reopen it. Only the fields you pass change; the rest is
    kept. If the task changed since you read its etag, nothing is overwritten and the current
    task is returned with the error. Emptying its title or description, or removing all its
    categories, asks the user first (and is refused at permission level write)."""
    etag = given_etag(etag)
    module = ical()
    tz = time_zone(ctx, timezone)
    caldav = (await nextcloud_for(ctx)).caldav
    cal = await caldav.calendar(calendar)
    obj = await caldav.find(cal, uid, "VTODO")
    changes = module.TodoChanges(
        summary=summary,
        due=module.parse_moment(due, tz) if due else None,
        clear_due=due == "",
        description=description,
        priority=priority,
        completed=completed,
        percent_complete=percent_complete,
        categories=categories,
    )
    ics = module.patch_todo(obj.ics, changes)
    shown = _info(obj.ics, cal.id, obj.etag)
    target = f'the task "{shown.summary}"'
    try:
        version = await approve_update(
            ctx,
            tool="nc_calendar_update_todo",
            target=target,
            host=caldav.host,
            given=etag,
            current=obj.etag,
            question=removal_question(target, _removals(shown, changes), f" in '{cal.id}'"),
        )
        new_etag = await version.write(ctx, lambda if_match: caldav.put(obj.href, ics, etag=if_match))
    except PreconditionFailed as exc:
        current_obj = await caldav.get(obj.href)
        current = _info(current_obj.ics, cal.id, current_obj.etag)
        return stale_version(exc, "task", "current_todo", current)
    info = _info(ics, cal.id, new_etag or "")
    return answer(info)


def _removals(shown: TodoInfo, changes: Any) -> list[str]:
    """What a change takes from a task (ADR 0019): its title or description, or all categories."""
    removed = []
    for name in ("summary", "description"):
        new = getattr(changes, name)
        if shrinks(getattr(shown, name), new):
            removed.append(f"remove its {name}" if not new.strip() else f"cut its {name}")
    if changes.categories == [] and shown.categories:
        removed.append(f"remove its categories ({', '.join(shown.categories)})")
    return removed


@toolset.tool(title="Delete a task", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_delete_todo(
    calendar: CalendarId,
    uid: Uid,
    ctx: Context[Any, Any],
    etag: Annotated[str | None, Field(description="Only delete if it is still this version")] = None,
) -> DeletedTodo:
    """Delete a task by its uid (from nc_calendar_list_todos). The user is asked to approve first
    (unless the server is set up not to ask). Pass its etag to delete only the version you have
    seen."""
    etag = given_etag(etag) if etag is not None else None
    nc = await nextcloud_for(ctx)
    cal = await nc.caldav.calendar(calendar)
    obj = await nc.caldav.find(cal, uid, "VTODO")
    if etag is not None and etag != obj.etag:
        raise PreconditionFailed(
            nc.http.host, "the task changed since that etag; nothing was deleted", status=412
        )
    info = _info(obj.ics, cal.id, obj.etag)
    target = f'the task "{info.summary}"'
    due = f", due {info.due}" if info.due else ""
    question = f"Delete {target}{due} ({'done' if info.completed else 'open'}) from '{cal.id}'?"
    asked = await require_approval(
        ctx, tool="nc_calendar_delete_todo", target=target, question=question, version=obj.etag
    )
    await delete_version(ctx, obj.href, obj.etag, asked=asked, tool="nc_calendar_delete_todo", target=target)
    return DeletedTodo(uid=uid, calendar=cal.id, summary=info.summary)
