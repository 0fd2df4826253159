"""The Files toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="files",
    title="Files",
    summary="Files and folders (WebDAV): list, search, read, upload, move, copy, delete",
    default=True,
    scopes=(
        Scope("files:read", "See and download your files"),
        Scope("files:write", "Upload, change, move and delete your files"),
    ),
)
