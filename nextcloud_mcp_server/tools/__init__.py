"""The MCP surface: the toolkit every toolset's tools share (the registry of tools, approvals,
results, output schemas, arguments, context, the apps' check), and the choice of the toolsets a
deployment offers. Each toolset's tools live in its folder (`toolsets/<name>/tools.py`,
docs/ADR/0052). Tools know nothing of HTTP details."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from nextcloud_mcp_server.config.validity import chosen_toolsets, on_demand_toolsets
from nextcloud_mcp_server.tools._registry import Toolset, ToolSpec
from nextcloud_mcp_server.toolsets import ToolEntry, declaration, declarations, indexed

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings

_Tool = TypeVar("_Tool", ToolSpec, ToolEntry)

__all__ = [
    "DEFAULT_TOOLSETS",
    "account_tools",
    "all_tools",
    "chosen_toolsets",
    "enabled_tools",
    "listed_tools",
    "offered_tools",
    "on_demand_tools",
    "on_demand_toolsets",
    "tool_scopes",
    "toolset_tools",
]

# What NEXTCLOUD_MCP_TOOLSETS=default offers: the toolsets of Nextcloud's core and Notes, as their
# declarations say (toolsets/<name>/__init__.py).
DEFAULT_TOOLSETS = tuple(found.name for found in declarations() if found.default)


def toolset_tools(name: str) -> list[ToolSpec]:
    """The tools of one toolset of the registry, importing its tools (`toolsets/<name>/tools.py`)
    only now: a deployment does not import the tools of toolsets it does not offer."""
    declaration(name)  # in the registry, or KeyError
    found: Toolset = importlib.import_module(f"nextcloud_mcp_server.toolsets.{name}.tools").toolset
    return list(found.specs)


def all_tools() -> list[ToolSpec]:
    """Every tool of every toolset NEXTCLOUD_MCP_TOOLSETS can choose, in the registry's order."""
    return [spec for found in declarations() if found.chosen for spec in toolset_tools(found.name)]


def account_tools() -> list[ToolSpec]:
    """The caller's own authorization (offered in offline-access mode only)."""
    return [spec for found in declarations() if not found.chosen for spec in toolset_tools(found.name)]


def _offered(settings: Settings, tools_of: Callable[[str], Sequence[_Tool]]) -> list[_Tool]:
    """The tools of the chosen toolsets (NEXTCLOUD_MCP_TOOLSETS) at the permission level
    (NEXTCLOUD_MCP_PERMISSIONS), as `tools_of` gives a toolset's. The account tools (offline mode)
    manage the connection itself, so people can connect and disconnect whatever is chosen."""
    level = settings.nextcloud_mcp_permissions
    chosen = chosen_toolsets(settings)
    offered = [
        tool
        for found in declarations()
        if found.name in chosen
        for tool in tools_of(found.name)
        if tool.allowed_at(level)
    ]
    if settings.oauth_enabled and settings.enable_offline_access:
        offered += [tool for found in declarations() if not found.chosen for tool in tools_of(found.name)]
    return offered


def enabled_tools(settings: Settings) -> list[ToolSpec]:
    """The tools this deployment offers, built (their modules imported)."""
    return _offered(settings, toolset_tools)


def listed_tools(settings: Settings) -> list[ToolEntry]:
    """The tools `enabled_tools` gives, as the index knows them (`toolsets/index.json`): what a
    server needs of them before they are built, without importing their modules (docs/ADR/0093)."""
    return _offered(settings, indexed)


def on_demand_tools(settings: Settings) -> list[ToolEntry]:
    """The tools of the toolsets a caller may enable for themselves (NEXTCLOUD_MCP_ON_DEMAND,
    docs/ADR/0070): served, but listed to a caller only once they enabled their toolset. Read from
    the index (`toolsets/index.json`), not their modules: those are imported when a tool is first
    built (`server._Server.built`), which saves most of a start's time and memory (docs/ADR/0093)."""
    level = settings.nextcloud_mcp_permissions
    wanted = on_demand_toolsets(settings)
    return [
        entry
        for found in declarations()
        if found.name in wanted
        for entry in indexed(found.name)
        if entry.allowed_at(level)
    ]


def offered_tools(settings: Settings) -> list[ToolEntry]:
    """Every tool this deployment serves, as the index knows them: those listed from the start,
    then those on demand."""
    return listed_tools(settings) + on_demand_tools(settings)


def tool_scopes(settings: Settings) -> set[str]:
    """The scopes the tools this deployment serves declare (what its authorization server issues)."""
    return {scope for spec in offered_tools(settings) for scope in spec.scopes}
