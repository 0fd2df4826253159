"""The Activity toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="activity",
    title="Activity",
    summary="What changed in your files and apps (Activity app): list by time and kind",
    app=App("activity", "Activity"),
    scopes=(Scope("activity:read", "Read your activity stream (what changed, and who changed it)"),),
)
