"""The Bookmarks toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="bookmarks",
    title="Bookmarks",
    summary="Bookmarks with their tags and folders (Bookmarks app): find, add, change, delete",
    app=App("bookmarks", "Bookmarks"),
    scopes=(
        Scope("bookmarks:read", "See your bookmarks, their tags and folders"),
        Scope("bookmarks:write", "Add, change and delete your bookmarks"),
    ),
)
