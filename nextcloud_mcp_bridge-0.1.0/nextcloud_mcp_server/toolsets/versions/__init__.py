"""The Versions toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="versions",
    title="Versions",
    summary="Older versions of a file: list, restore",
    app=App("files_versions", "Versions"),
    scopes_of="files",
)
