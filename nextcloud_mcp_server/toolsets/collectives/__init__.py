"""The Collectives toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="collectives",
    title="Collectives",
    summary="Collectives: create them; list, read, create, edit, move, copy, trash pages",
    # the OCS API came with Collectives 3.0, which needs Nextcloud 30 (docs/ADR/0046)
    app=App("collectives", "Collectives", nextcloud_from=30),
    scopes=(
        Scope("collectives:read", "See your collectives and read their pages"),
        Scope("collectives:write", "Create collectives; create, edit, move, copy and trash pages"),
    ),
)
