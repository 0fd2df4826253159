"""The Collectives toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="collectives",
    title="Collectives",
    summary="Pages of your collectives: list, read, create, edit",
    app=App("collectives", "Collectives"),
    scopes=(
        Scope("collectives:read", "See your collectives and read their pages"),
        Scope("collectives:write", "Create and edit pages of your collectives"),
    ),
)
