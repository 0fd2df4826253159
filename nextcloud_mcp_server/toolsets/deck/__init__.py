"""The Deck toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="deck",
    title="Deck",
    summary="Deck boards, stacks, labels and cards: read, create, move, change, archive, comment, delete",
    app=App("deck", "Deck"),
    scopes=(
        Scope("deck:read", "See your Deck boards, cards and their comments"),
        Scope(
            "deck:write",
            "Create and change Deck boards and cards, move and archive cards, comment on them, "
            "delete cards, stacks, labels and boards",
        ),
    ),
)
