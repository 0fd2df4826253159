"""The user status toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="status",
    title="User status",
    summary="Your online status and status message (user status): read, set, clear",
    app=App("user_status", "User status"),
    scopes=(
        Scope("status:read", "Read your online status and status message"),
        Scope("status:write", "Set your online status and the status message others see"),
    ),
)
