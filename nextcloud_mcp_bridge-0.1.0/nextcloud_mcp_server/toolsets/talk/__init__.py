"""The Talk toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="talk",
    title="Talk",
    summary="Talk conversations: read, post, reply, react, start one",
    app=App("spreed", "Talk"),
    scopes=(
        Scope("talk:read", "Read your Talk conversations and messages"),
        Scope("talk:write", "Post, reply and react in Talk, and start conversations"),
    ),
)
