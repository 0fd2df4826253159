"""The Contacts toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="contacts",
    title="Contacts",
    summary="Address books and contacts (CardDAV)",
    default=True,
    scopes=(
        Scope("contacts:read", "See your contacts"),
        Scope("contacts:write", "Add, change and delete contacts"),
    ),
)
