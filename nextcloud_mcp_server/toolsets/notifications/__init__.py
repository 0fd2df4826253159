"""The Notifications toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="notifications",
    title="Notifications",
    summary="Your Nextcloud notifications (Notifications app): list, dismiss one or all",
    app=App("notifications", "Notifications"),
    scopes=(
        Scope("notifications:read", "Read your notifications"),
        Scope("notifications:write", "Dismiss your notifications"),
    ),
)
