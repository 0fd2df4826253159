"""The Comments toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="comments",
    title="Comments",
    summary="Comments on files: list, add",
    app=App("comments", "Comments"),
    scopes_of="files",
)
