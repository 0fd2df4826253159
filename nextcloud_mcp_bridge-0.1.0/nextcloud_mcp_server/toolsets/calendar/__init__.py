"""The Calendar toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="calendar",
    title="Calendar",
    summary="Calendars, events and tasks (CalDAV), and free time",
    default=True,
    scopes=(
        Scope("calendar:read", "See your calendars, events and tasks"),
        Scope("calendar:write", "Add, change and delete events and tasks"),
    ),
)
