"""Icons (MCP 2025-11-25 `icons`) for the server and each toolset, light and dark, shipped in the
package as small SVG files and sent as `data:` URIs, so they reach the client over every transport
with nothing fetched from anywhere (docs/ADR/0040-completions-and-icons.md).

The server's are beside this module (`nextcloud-light.svg`, `nextcloud-dark.svg`); a toolset's are
in its own folder, `toolsets/<name>/icons/light.svg` and `dark.svg` (docs/ADR/0052). `light` is
drawn for a light background, `dark` for a dark one. Each is a few hundred bytes: every tool
carries its toolset's pair in `tools/list`.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Literal
from urllib.parse import quote

from mcp.types import Icon

from nextcloud_mcp_server.toolsets import NAMES

__all__ = ["SERVER", "THEMES", "TOOLSETS", "icons_for", "svg"]

SERVER = "nextcloud"
TOOLSETS = NAMES  # every toolset of the registry has its icons
THEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
# What a data URI must escape (RFC 3986 allows the rest as it is; the files use single quotes).
_SAFE = "/:=';,.()-"
# Every icon is found from the top package, looked up once: `files()` of a package costs about a
# millisecond per call (its loader's resource reader), and `tools/list` with every toolset read
# 54 icons before its first answer; `files()` of a toolset's package would also import it.
_PACKAGE = files("nextcloud_mcp_server")


def svg(name: str, theme: str) -> str:
    """The SVG text of one icon."""
    if name == SERVER:
        path = _PACKAGE / "icons" / f"{name}-{theme}.svg"
    else:
        path = _PACKAGE / "toolsets" / name / "icons" / f"{theme}.svg"
    return path.read_text(encoding="utf-8").strip()


@functools.cache
def icons_for(name: str) -> tuple[Icon, ...]:
    """The light and dark icon of the server (`SERVER`) or of a toolset; () for a name without."""
    if name != SERVER and name not in TOOLSETS:
        return ()
    return tuple(
        Icon(src=f"data:image/svg+xml,{quote(svg(name, theme), safe=_SAFE)}", theme=theme) for theme in THEMES
    )
