"""Activity toolset: what changed in the user's files and apps, from the Activity app."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import named_hidden as visible
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.activity import DECLARATION
from nextcloud_mcp_server.toolsets.activity.client import Activity, ActivityClient

__all__ = ["toolset"]

toolset = Toolset("activity")

PAGE = 100  # activities asked per request
MAX_PAGES = 10  # requests per call: at most 1,000 activities looked at
_FILTERS = {
    "all": "all",
    "files": "files",
    "by_me": "self",
    "by_others": "by",
    "favorites": "files_favorites",
}


class ActivityItem(BaseModel):
    id: int
    when: str
    app: str
    type: str
    by: str | None = Field(description="The user who did it")
    text: str = Field(description="What happened, as Nextcloud words it")
    objects: list[str] = Field(description="The files or things it concerns (at most 20)")
    link: str | None = None


class ActivityList(BaseModel):
    activities: list[ActivityItem] = Field(description="Newest first")
    complete: bool = Field(description="False: there is more in the period; narrow it or raise limit")


def _objects(found: Activity) -> list[str]:
    names = list(found.objects.values()) if isinstance(found.objects, dict) else []
    if not names and found.object_name:
        names = [found.object_name]
    return [visible(str(name))[:500] for name in names[:20]]


def _item(found: Activity) -> ActivityItem:
    return ActivityItem(
        id=found.id,
        when=found.when.isoformat(),
        app=found.app[:50],
        type=found.type[:50],
        by=visible(found.user)[:100] if found.user else None,
        text=visible(found.subject)[:500],
        objects=_objects(found),
        link=found.link[:1000] or None,
    )


def _moment(value: datetime | None, default: datetime) -> datetime:
    if value is None:
        return default
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@toolset.tool(title="List activity", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_activity_list(
    ctx: Context[Any, Any],
    since: Annotated[
        datetime | None, Field(description="From this time (ISO 8601); default: 7 days ago")
    ] = None,
    until: Annotated[datetime | None, Field(description="Until this time (ISO 8601); default: now")] = None,
    kind: Literal["all", "files", "by_me", "by_others", "favorites"] = "all",
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
) -> ActivityList:
    """What changed in your files and apps in a period (default: the last 7 days), newest first:
    e.g. kind=files for "what changed in my files this week"."""
    now = datetime.now(UTC)
    start, end = _moment(since, now - timedelta(days=7)), _moment(until, now)
    if start >= end:
        raise InvalidInput("since must be before until")
    activity = (await nextcloud_for(ctx)).api(ActivityClient)
    shown: list[ActivityItem] = []
    cursor: int | None = None
    for _ in range(MAX_PAGES):
        found, cursor = await activity.page(_FILTERS[kind], since=cursor, limit=PAGE)
        for item in found:
            moment = _moment(item.when, now)
            if moment < start:
                return ActivityList(activities=shown, complete=True)
            if moment < end:
                if len(shown) == limit:
                    return ActivityList(activities=shown, complete=False)
                shown.append(_item(item))
        if cursor is None:
            return ActivityList(activities=shown, complete=True)
    return ActivityList(activities=shown, complete=False)
