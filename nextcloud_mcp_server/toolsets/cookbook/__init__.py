"""The Cookbook toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="cookbook",
    title="Cookbook",
    summary="Recipes of the Cookbook app: list, search, read, add, change, delete",
    app=App("cookbook", "Cookbook"),
    scopes=(
        Scope("cookbook:read", "Read your recipes in the Cookbook app"),
        Scope("cookbook:write", "Add, change and delete your recipes"),
    ),
)
