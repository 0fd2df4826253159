"""The file reminders toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="reminders",
    title="File reminders",
    summary="Reminders on your files (file reminders): read, set, remove",
    # files_reminders ships enabled on 29 and 34 and names no capability, so it cannot be seen
    # as enabled per user: offered as Nextcloud's own; a disabled app answers 404 (ADR 0074)
    scopes_of="files",
)
