"""The Tags toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="tags",
    title="Tags",
    summary="Collaborative tags and favorites on files: create, assign, find by tag, remove; mark favorites",
    app=App("systemtags", "Collaborative tags"),
    scopes_of="files",
)
