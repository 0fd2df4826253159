"""The Polls toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="polls",
    title="Polls",
    summary="Polls (Polls app): list, read with votes, create with options, vote, delete",
    app=App("polls", "Polls"),
    scopes=(
        Scope("polls:read", "See your polls, their options and votes"),
        Scope("polls:write", "Create polls, vote and delete your polls"),
    ),
)
