"""What `tools/list` shows of a tool that is not built yet (docs/ADR/0093).

Building a tool for the SDK (its arguments model, its input and output schemas) is most of a
start's own work: about 0.2 s for the 40 default tools. What it gives `tools/list` never changes
for a given tool, so `make docs` writes it once per tool to `toolsets/listing.jsonl` (one JSON
object a line: `{"toolset": ..., "tool": ...}`, the tool as `tools/list` shows it but its icons,
which are its toolset's), and a server lists a tool from there until the tool is built (at its
first call, or right after the handshake by the warm-up). `tests/test_generated.py` fails when
the file is out of date, and a tool missing from it is built at start, as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from importlib import resources
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import Tool as ListedTool

from nextcloud_mcp_server.icons import icons_for

__all__ = ["LISTING_FILE", "definition", "line", "listed"]

LISTING_FILE = "listing.jsonl"  # in the toolsets package, beside index.json
_PACKAGE = "nextcloud_mcp_server.toolsets"


def definition(tool: Tool) -> dict[str, Any]:
    """`tool` as `tools/list` shows it (the SDK's own conversion), without its icons."""
    shown = ListedTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.parameters,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
        _meta=tool.meta,
    )
    found: dict[str, Any] = shown.model_dump(mode="json", by_alias=True, exclude_none=True)
    return found


def line(toolset: str, tool: Tool) -> str:
    """One line of the listing file, as `make docs` writes it."""
    entry = {"toolset": toolset, "tool": definition(tool)}
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def listed(toolsets: Collection[str]) -> dict[str, ListedTool]:
    """The tools of `toolsets` as the listing file shows them, with their toolset's icons, by
    name; only their lines are parsed (the file holds every toolset's tools)."""
    try:
        text = resources.files(_PACKAGE).joinpath(LISTING_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    prefixes = tuple(f'{{"toolset":{json.dumps(name)},' for name in toolsets)
    found: dict[str, ListedTool] = {}
    for text_line in text.splitlines():
        if not text_line.startswith(prefixes):
            continue
        stored = json.loads(text_line)
        icons = icons_for(stored["toolset"])
        shown = ListedTool.model_validate({**stored["tool"], **({"icons": list(icons)} if icons else {})})
        found[shown.name] = shown
    return found
