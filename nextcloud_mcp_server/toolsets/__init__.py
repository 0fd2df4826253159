"""The registry of toolsets: one line per toolset, in the order `tools/list` shows them.

Each toolset is a folder beside this module whose `__init__.py` holds its `DECLARATION`
(`_declaration.py`) and whose `icons/` hold its icons (docs/ADR/0052-toolsets-as-slices.md).
Reading the declarations imports only those small modules; a toolset's tools are imported by
`tools.toolset_tools` only when a deployment offers it.
"""

from __future__ import annotations

import functools
import importlib

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["NAMES", "App", "Declaration", "Scope", "declaration", "declarations", "scopes"]

NAMES = (
    "notes",
    "calendar",
    "files",
    "contacts",
    "dav_collections",
    "sharing",
    "search",
    "find",
    "collectives",
    "talk",
    "trash",
    "versions",
    "tags",
    "comments",
    "deck",
    "tables",
    "mail",
    "activity",
    "notifications",
    "status",
    "reminders",
    "cookbook",
    "bookmarks",
    "polls",
    "forms",
    "news",
    "account",
)


@functools.cache
def declaration(name: str) -> Declaration:
    """The declaration of the toolset `name` (KeyError for a name not in the registry)."""
    if name not in NAMES:
        raise KeyError(f"no toolset {name!r} in the registry (nextcloud_mcp_server/toolsets/__init__.py)")
    found = importlib.import_module(f"{__name__}.{name}").DECLARATION
    if not isinstance(found, Declaration) or found.name != name:
        raise TypeError(f"toolsets/{name}/__init__.py must declare DECLARATION = Declaration({name!r}, ...)")
    return found


def declarations() -> tuple[Declaration, ...]:
    """Every toolset's declaration, in the registry's order."""
    return tuple(declaration(name) for name in NAMES)


def scopes() -> tuple[Scope, ...]:
    """Every scope of this server with its consent words, in the registry's order."""
    return tuple(scope for found in declarations() for scope in found.scopes)
