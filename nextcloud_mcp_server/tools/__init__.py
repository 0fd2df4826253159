"""The MCP surface: one module per toolset. Tools know nothing of HTTP details."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nextcloud_mcp_server.tools._registry import ToolSpec

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings

__all__ = ["account_tools", "all_tools", "enabled_tools", "tool_scopes"]


def all_tools() -> list[ToolSpec]:
    """Every tool of every toolset, in a stable order."""
    # `tasks` registers its tools on the calendar toolset when imported.
    from nextcloud_mcp_server.tools import calendar, contacts, files, notes, search, sharing, tasks  # noqa: F401

    toolsets = (
        notes.toolset,
        calendar.toolset,
        files.toolset,
        contacts.toolset,
        sharing.toolset,
        search.toolset,
    )
    return [spec for toolset in toolsets for spec in toolset.specs]


def account_tools() -> list[ToolSpec]:
    """The caller's own authorization (offered in offline-access mode only)."""
    from nextcloud_mcp_server.tools import account

    return list(account.toolset.specs)


def enabled_tools(settings: Settings) -> list[ToolSpec]:
    """The tools this deployment offers. NEXTCLOUD_MCP_PERMISSIONS limits what may be done to the
    user's Nextcloud; the account tools (offline mode) manage the connection itself, so people can
    connect and disconnect at every level."""
    level = settings.nextcloud_mcp_permissions
    offline = settings.oauth_enabled and settings.enable_offline_access
    return [spec for spec in all_tools() if spec.allowed_at(level)] + (account_tools() if offline else [])


def tool_scopes(settings: Settings) -> set[str]:
    """The scopes the tools this deployment offers declare (what its authorization server issues)."""
    return {scope for spec in enabled_tools(settings) for scope in spec.scopes}
