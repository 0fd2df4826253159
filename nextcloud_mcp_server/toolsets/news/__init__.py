"""The News toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="news",
    title="News",
    summary="Feeds and their articles (News app): list, subscribe, read, mark read or starred",
    app=App("news", "News"),
    scopes=(
        Scope("news:read", "See your news feeds, folders and articles"),
        Scope("news:write", "Subscribe to feeds and mark articles read or starred"),
    ),
)
