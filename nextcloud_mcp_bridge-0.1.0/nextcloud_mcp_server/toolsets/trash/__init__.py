"""The Trash toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="trash",
    title="Trash",
    summary="Deleted files: list, restore, empty the trash bin",
    app=App("files_trashbin", "Deleted files"),
    scopes_of="files",
)
