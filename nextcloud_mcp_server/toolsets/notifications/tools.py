"""Notifications toolset: the user's Nextcloud notifications, listed and dismissed."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.names import named_hidden
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._shown import digest
from nextcloud_mcp_server.toolsets.notifications import DECLARATION
from nextcloud_mcp_server.toolsets.notifications.client import Notification, NotificationsClient
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("notifications")

MAX_DISMISSED = 200  # notifications dismissed by one call (one request each)
_SHOWN = 10  # of them named in the question


class NotificationItem(BaseModel):
    id: int
    when: str
    app: str
    subject: str
    message: str | None = None
    link: str | None = None


class NotificationList(BaseModel):
    notifications: list[NotificationItem] = Field(description="Newest first")
    total: int


class Dismissed(BaseModel):
    dismissed: list[int]


def _item(found: Notification) -> NotificationItem:
    return NotificationItem(
        id=found.id,
        when=found.when.isoformat(),
        app=found.app[:50],
        subject=named_hidden(found.subject)[:500],
        message=named_hidden(found.message)[:1000] or None,
        link=found.link[:1000] or None,
    )


@toolset.tool(title="List notifications", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_notifications_list(
    ctx: Context[Any, Any], limit: Annotated[int, Field(ge=1, le=100)] = 25
) -> NotificationList:
    """List your Nextcloud notifications, newest first: each with its id, app, subject, message
    and time, to read them or to dismiss one by its id."""
    found = await (await nextcloud_for(ctx)).api(NotificationsClient).list()
    return NotificationList(notifications=[_item(n) for n in found[:limit]], total=len(found))


@toolset.tool(title="Dismiss notifications", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_notifications_dismiss(
    ctx: Context[Any, Any],
    notification_id: Annotated[int | None, Field(ge=1, description="The one to dismiss")] = None,
    all: Annotated[bool, Field(description="Dismiss every notification (the user is asked first)")] = False,
) -> Dismissed:
    """Dismiss one notification by id, or all of them with all=true (the user is asked first and
    exactly the notifications shown are dismissed)."""
    if (notification_id is None) == (not all):
        raise InvalidInput("give either notification_id or all=true")
    client = (await nextcloud_for(ctx)).api(NotificationsClient)
    if notification_id is not None:
        await client.dismiss(notification_id)
        return Dismissed(dismissed=[notification_id])
    found = (await client.list())[:MAX_DISMISSED]
    if not found:
        raise NotFound(client.host, "you have no notifications", status=404)
    named = "\n".join(f"- {named_hidden(n.subject)[:120]}" for n in found[:_SHOWN])
    more = f"\n… and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    question = f"Dismiss all {len(found)} of your notifications?\n{named}{more}"
    target = f"{len(found)} notifications"
    version = digest([n.id for n in found])
    asked = await require_approval(
        ctx, tool="nc_notifications_dismiss", target=target, question=question, version=version
    )
    if asked:
        now = {n.id for n in await client.list()}
        if not {n.id for n in found} <= now:
            await refuse_changed(ctx, tool="nc_notifications_dismiss", target=target)
    # one by one: a notification that arrived after the question is not dismissed unseen
    for n in found:
        await client.dismiss(n.id)
    return Dismissed(dismissed=[n.id for n in found])
