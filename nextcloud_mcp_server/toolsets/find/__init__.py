"""The Find toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0071)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="find",
    title="Find",
    summary="Find notes and files by the words in them, from an index of their text this server keeps",
    scopes=(
        Scope(
            "find:read",
            "Find your notes and files by their words (an index of their text is kept until you remove it)",
        ),
        Scope("find:write", "Delete the index of your notes and files this server keeps"),
    ),
)
