"""The Notes toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="notes",
    title="Notes",
    summary="Your notes (Notes app): list, search, read, create, change, delete",
    default=True,
    scopes=(
        Scope("notes:read", "Read your notes"),
        Scope("notes:write", "Create, change and delete your notes"),
    ),
)
