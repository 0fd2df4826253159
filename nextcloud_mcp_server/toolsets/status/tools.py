"""User status toolset: the user's online status and the status message others see."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import INVISIBLE, check_visible, named_hidden
from nextcloud_mcp_server.tools._audience import Audience, approve_publication
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.status import DECLARATION
from nextcloud_mcp_server.toolsets.status.client import MAX_MESSAGE, UserStatus, UserStatusClient
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("status")

_SEEN_BY = Audience(
    "your user status",
    open_to=("every user of this Nextcloud who can see you (in Talk, Files, the contacts menu)",),
)


class StatusInfo(BaseModel):
    status: str = Field(description="online, away, dnd (do not disturb), invisible or offline")
    message: str | None = None
    icon: str | None = None
    clear_at: str | None = Field(default=None, description="When the message goes away by itself")


def _info(found: UserStatus) -> StatusInfo:
    return StatusInfo(
        status=found.status[:20],
        message=named_hidden(found.message)[:200] if found.message else None,
        icon=named_hidden(found.icon)[:20] if found.icon else None,
        clear_at=datetime.fromtimestamp(found.clear_at, UTC).isoformat() if found.clear_at else None,
    )


def _message(message: str | None) -> str:
    """The status message as it will be shown: one line; hidden and control characters refused."""
    text = " ".join((message or "").split())
    check_visible(text, "the status message")
    if INVISIBLE.search(text):
        raise InvalidInput("the status message contains a control or invisible character; remove it")
    return text


@toolset.tool(title="Get your status", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_status_get(ctx: Context[Any, Any]) -> StatusInfo:
    """Your online status (online, away, do not disturb, invisible, offline) and your status
    message with its icon and when it clears by itself."""
    return _info(await (await nextcloud_for(ctx)).api(UserStatusClient).get())


async def _seen_by() -> Audience:
    return _SEEN_BY


@toolset.tool(title="Set your status", idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_status_set(
    ctx: Context[Any, Any],
    status: Literal["online", "away", "dnd", "invisible"] | None = None,
    message: Annotated[
        str | None, Field(max_length=MAX_MESSAGE, description="Status message others see; empty clears it")
    ] = None,
    icon: Annotated[str | None, Field(max_length=8, description="One emoji shown with the message")] = None,
    clear_at: Annotated[datetime | None, Field(description="When the message goes away (ISO 8601)")] = None,
) -> StatusInfo:
    """Set your online status and/or your status message (others see the message, so the user is
    asked first). An empty message clears it."""
    if status is None and message is None:
        raise InvalidInput("give a status, a message, or both")
    moment = None
    if clear_at is not None:
        when = clear_at if clear_at.tzinfo else clear_at.replace(tzinfo=UTC)
        if when <= datetime.now(UTC):
            raise InvalidInput("clear_at must be in the future")
        moment = int(when.timestamp())
    text = _message(message)
    if text and icon is not None:
        check_visible(icon, "the icon")
    client = (await nextcloud_for(ctx)).api(UserStatusClient)
    now: UserStatus | None = None  # the status as the last change answered it
    if text:
        shown = f"{icon} {text}" if icon else text
        await approve_publication(
            ctx,
            tool="nc_status_set",
            audience=_SEEN_BY,
            text=shown,
            action="Set your status message",
            again=_seen_by,
        )
        now = await client.set_message(text, icon, moment)
    elif message is not None:
        await client.clear_message()  # answers nothing: the status is read after
    if status is not None:
        now = await client.set_status(status)
    return _info(now if now is not None else await client.get())
