"""The Search toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="search",
    title="Search",
    summary="Nextcloud's unified search across its apps",
    default=True,
    scopes=(Scope("search:read", "Search across your Nextcloud"),),
)
