"""The Sharing toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="sharing",
    title="Sharing",
    summary="Shares of your files and folders: links, users, groups",
    default=True,
    scopes=(
        Scope("sharing:read", "See what you share and what others share with you"),
        Scope("sharing:write", "Share your files and change or end shares"),
    ),
)
