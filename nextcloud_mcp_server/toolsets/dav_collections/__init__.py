"""The toolset of calendars and address books themselves: its declaration
(docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0087)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import Declaration

__all__ = ["DECLARATION"]

# On demand (not `default`): the calendar and contacts toolsets are in the default list, which
# must not grow; these tools are one call away. The calendar tools declare the calendar scopes,
# the address-book tools the contacts scopes (`scopes_of` names the first).
DECLARATION = Declaration(
    name="dav_collections",
    title="Calendars and address books",
    summary="Create, rename (and colour) calendars and address books; delete them after asking",
    scopes_of="calendar",
)
