"""The Account toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="account",
    title="Account",
    summary="Your connection to Nextcloud: check, connect, disconnect (offline access only)",
    chosen=False,
)
