"""File reminders toolset: a reminder on a file or folder, which Nextcloud notifies when due."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import FILES_READ, FILES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_target import FilePath, resolve
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.reminders.client import RemindersClient

__all__ = ["toolset"]

toolset = Toolset("reminders")


class Reminder(BaseModel):
    path: str
    due: str | None = Field(description="When Nextcloud reminds you; null: no reminder")


@toolset.tool(title="Get a file's reminder", read_only=True)
@require_scopes(FILES_READ)
async def nc_reminders_get(path: FilePath, ctx: Context[Any, Any]) -> Reminder:
    """When Nextcloud will remind you of a file or folder (its path in your files), or null when
    no reminder is set."""
    _, entry, file_id = await resolve(ctx, path)
    due = await (await nextcloud_for(ctx)).api(RemindersClient).due(file_id)
    return Reminder(path=paths.display(entry.path), due=due.isoformat() if due else None)


@toolset.tool(title="Set or remove a file's reminder", idempotent=True)
@require_scopes(FILES_WRITE)
async def nc_reminders_set(
    path: FilePath,
    ctx: Context[Any, Any],
    due: Annotated[datetime | None, Field(description="When to remind you (ISO 8601); null removes it")],
) -> Reminder:
    """Set a reminder on a file or folder (Nextcloud notifies you when it is due), or remove it
    with due=null."""
    when = None
    if due is not None:
        when = due if due.tzinfo else due.replace(tzinfo=UTC)
        if when.year > 9998:  # 9999-12-31 at -14:00 overflowed once moved to UTC
            raise InvalidInput("due must be before the year 9999")
        if when <= datetime.now(UTC):
            raise InvalidInput("due must be in the future")
    _, entry, file_id = await resolve(ctx, path)
    reminders = (await nextcloud_for(ctx)).api(RemindersClient)
    shown = paths.display(entry.path)
    if when is None:
        if await reminders.due(file_id) is not None:  # DELETE answers 404 when there is none
            await reminders.remove(file_id)
        return Reminder(path=shown, due=None)
    # Nextcloud keeps the due time to the second and its PUT answers nothing: sent as it is kept,
    # the answer says what is stored without reading it back (issue 43: one request fewer)
    when = when.astimezone(UTC).replace(microsecond=0)
    await reminders.set(file_id, when)
    return Reminder(path=shown, due=when.isoformat())
