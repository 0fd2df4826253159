"""The registry of toolsets: one line per toolset, in the order `tools/list` shows them.

Each toolset is a folder beside this module whose `__init__.py` holds its `DECLARATION`
(`_declaration.py`) and whose `icons/` hold its icons (docs/ADR/0052-toolsets-as-slices.md).
Reading the declarations imports only those small modules; a toolset's tools are imported by
`tools.toolset_tools` only when a deployment lists it, or when one of its tools is first built.
What the server must know of the tools of a toolset served on demand before that (names, scopes,
annotations, views) is read from `index.json`, which `make docs` writes (docs/ADR/0093).
"""

from __future__ import annotations

import functools
import importlib
import json
from importlib import resources

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope, ToolEntry

__all__ = [
    "INDEX_FILE",
    "NAMES",
    "App",
    "Declaration",
    "Scope",
    "ToolEntry",
    "declaration",
    "declarations",
    "indexed",
    "scopes",
]

INDEX_FILE = "index.json"  # beside this module; written by `make docs` (tests/generated.py)

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


@functools.cache
def _index() -> dict[str, tuple[ToolEntry, ...]]:
    text = resources.files(__name__).joinpath(INDEX_FILE).read_text(encoding="utf-8")
    return {
        name: tuple(
            ToolEntry(**{**entry, "toolset": name, "scopes": tuple(entry["scopes"])}) for entry in entries
        )
        for name, entries in json.loads(text).items()
    }


def indexed(name: str) -> tuple[ToolEntry, ...]:
    """The tools of the toolset `name` as `index.json` knows them, in their module's order,
    without importing that module (docs/ADR/0093)."""
    declaration(name)  # in the registry, or KeyError
    return _index().get(name, ())
