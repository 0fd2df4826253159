"""The MCP surface: one module per toolset. Tools know nothing of HTTP details."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nextcloud_mcp_server.config import ConfigError
from nextcloud_mcp_server.tools._apps import TOOLSET_APPS
from nextcloud_mcp_server.tools._registry import ToolSpec

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings

__all__ = [
    "DEFAULT_TOOLSETS",
    "account_tools",
    "all_tools",
    "chosen_toolsets",
    "enabled_tools",
    "tool_scopes",
]

# What NEXTCLOUD_MCP_TOOLSETS=default offers: the toolsets of Nextcloud's own core and Notes.
DEFAULT_TOOLSETS = ("notes", "calendar", "files", "contacts", "sharing", "search")


def all_tools() -> list[ToolSpec]:
    """Every tool of every toolset, in a stable order."""
    # `tasks` registers its tools on the calendar toolset when imported.
    from nextcloud_mcp_server.tools import (  # noqa: F401
        calendar,
        collectives,
        comments,
        contacts,
        deck,
        files,
        notes,
        search,
        sharing,
        tables,
        tags,
        talk,
        tasks,
        trash,
        versions,
    )

    toolsets = (
        notes.toolset,
        calendar.toolset,
        files.toolset,
        contacts.toolset,
        sharing.toolset,
        search.toolset,
        collectives.toolset,
        talk.toolset,
        trash.toolset,
        versions.toolset,
        tags.toolset,
        comments.toolset,
        deck.toolset,
        tables.toolset,
    )
    return [spec for toolset in toolsets for spec in toolset.specs]


def account_tools() -> list[ToolSpec]:
    """The caller's own authorization (offered in offline-access mode only)."""
    from nextcloud_mcp_server.tools import account

    return list(account.toolset.specs)


def chosen_toolsets(settings: Settings) -> set[str]:
    """The toolsets NEXTCLOUD_MCP_TOOLSETS names: `default`, `all`, or toolset names, which may
    include `default` (`default,deck`). An unknown name is a configuration error naming the known
    ones, not a silently smaller tool list. The toolsets of Nextcloud apps (`TOOLSET_APPS`) are
    known names even in a build without their module, so a deployment configured for them starts."""
    known = list(dict.fromkeys([*(spec.toolset for spec in all_tools()), *TOOLSET_APPS]))
    chosen: set[str] = set()
    for name in settings.toolset_names:
        if name == "all":
            chosen.update(known)
        elif name == "default":
            chosen.update(DEFAULT_TOOLSETS)
        elif name in known:
            chosen.add(name)
        else:
            choices = ", ".join(["default", "all", *known])
            raise ConfigError([f"NEXTCLOUD_MCP_TOOLSETS: unknown toolset {name[:40]!r}; known: {choices}"])
    return chosen


def enabled_tools(settings: Settings) -> list[ToolSpec]:
    """The tools this deployment offers: those of the chosen toolsets (NEXTCLOUD_MCP_TOOLSETS) at
    the permission level (NEXTCLOUD_MCP_PERMISSIONS). The account tools (offline mode) manage the
    connection itself, so people can connect and disconnect whatever is chosen."""
    level = settings.nextcloud_mcp_permissions
    chosen = chosen_toolsets(settings)
    offline = settings.oauth_enabled and settings.enable_offline_access
    offered = [spec for spec in all_tools() if spec.toolset in chosen and spec.allowed_at(level)]
    return offered + (account_tools() if offline else [])


def tool_scopes(settings: Settings) -> set[str]:
    """The scopes the tools this deployment offers declare (what its authorization server issues)."""
    return {scope for spec in enabled_tools(settings) for scope in spec.scopes}
