"""Icons (MCP 2025-11-25 `icons`) for the server and each toolset, light and dark, shipped in the
package as small SVG files beside this module and sent as `data:` URIs, so they reach the client
over every transport with nothing fetched from anywhere (docs/ADR/0040-completions-and-icons.md).

`<name>-light.svg` is drawn for a light background, `<name>-dark.svg` for a dark one. Each is a
few hundred bytes: every tool carries its toolset's pair in `tools/list`.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Literal
from urllib.parse import quote

from mcp.types import Icon

__all__ = ["SERVER", "THEMES", "TOOLSETS", "icons_for", "svg"]

SERVER = "nextcloud"
TOOLSETS = (
    "notes",
    "calendar",
    "files",
    "contacts",
    "sharing",
    "search",
    "account",
    "collectives",
    "talk",
    "trash",
    "versions",
    "tags",
    "comments",
    "deck",
    "tables",
)
THEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
# What a data URI must escape (RFC 3986 allows the rest as it is; the files use single quotes).
_SAFE = "/:=';,.()-"


def svg(name: str, theme: str) -> str:
    """The SVG text of one icon."""
    return (files(__package__) / f"{name}-{theme}.svg").read_text(encoding="utf-8").strip()


@functools.cache
def icons_for(name: str) -> tuple[Icon, ...]:
    """The light and dark icon of the server (`SERVER`) or of a toolset; () for a name without."""
    if name != SERVER and name not in TOOLSETS:
        return ()
    return tuple(
        Icon(src=f"data:image/svg+xml,{quote(svg(name, theme), safe=_SAFE)}", theme=theme) for theme in THEMES
    )
