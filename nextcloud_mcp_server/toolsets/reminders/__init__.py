"""The file reminders toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="reminders",
    title="File reminders",
    summary="Reminders on your files (file reminders): read, set, remove",
    app=App("files_reminders", "File reminders"),
    scopes_of="files",
)
