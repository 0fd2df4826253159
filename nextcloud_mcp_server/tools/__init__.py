"""The MCP surface: one module per toolset. Tools know nothing of HTTP details."""

from __future__ import annotations

from nextcloud_mcp_server.tools._registry import ToolSpec

__all__ = ["account_tools", "all_tools"]


def all_tools() -> list[ToolSpec]:
    """Every tool of every toolset, in a stable order."""
    # `tasks` registers its tools on the calendar toolset when imported.
    from nextcloud_mcp_server.tools import calendar, files, notes, tasks  # noqa: F401

    return [spec for toolset in (notes.toolset, calendar.toolset, files.toolset) for spec in toolset.specs]


def account_tools() -> list[ToolSpec]:
    """The caller's own authorization (offered in offline-access mode only)."""
    from nextcloud_mcp_server.tools import account

    return list(account.toolset.specs)
