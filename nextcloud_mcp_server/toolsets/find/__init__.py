"""The Find toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0071)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="find",
    title="Find",
    summary="Find notes, files, events, contacts, cards and pages by their words, from an index this "
    "server keeps",
    scopes=(
        Scope(
            "find:read",
            "Find your notes, files, events, contacts, cards and pages by their words (an index of their "
            "text is kept until you remove it)",
        ),
        Scope("find:write", "Delete the index of your items this server keeps"),
    ),
)
