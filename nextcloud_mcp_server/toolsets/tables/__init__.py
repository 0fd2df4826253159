"""The Tables toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="tables",
    title="Tables",
    summary="Tables (Tables app): create tables and columns; read, add, change and delete rows",
    app=App("tables", "Tables"),
    scopes=(
        Scope("tables:read", "Read your tables in the Tables app"),
        Scope("tables:write", "Create tables and columns; add, change and delete rows of your tables"),
    ),
)
