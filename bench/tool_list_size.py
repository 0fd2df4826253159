"""The size of `tools/list` (characters of its JSON result, a proxy for tokens) in single-user
mode, for NEXTCLOUD_MCP_TOOLSETS=default and =all: per toolset and in total, and what of it the
icons are (hosts show icons; they build the model's tool definitions from names, descriptions and
schemas). No Nextcloud is asked: a single user who has every app sees all of `all`. With
`default`, what a caller sees before enabling any toolset on demand (docs/ADR/0070): the default
toolsets and the two tools that reach the others (`on demand`).

    .venv/bin/python bench/tool_list_size.py [--json]

tests/tools/test_tool_list_size.py keeps the default within its budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_server
from nextcloud_mcp_server.tools import enabled_tools, on_demand_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL

ON_DEMAND = "on demand"  # the toolset column of nc_toolsets and nc_call_tool


async def listed(toolsets: str) -> list[dict[str, Any]]:
    """The tools of `tools/list` as they go on the wire (camelCase, no nulls), as a caller sees
    them before enabling any toolset on demand."""
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="alice",
        nextcloud_mcp_toolsets=toolsets,
    )
    hidden = {spec.name for spec in on_demand_tools(settings)}
    tools = await build_server(settings, cast(Runtime, None)).list_tools()
    return [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        for tool in tools
        if tool.name not in hidden
    ]


def chars(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def measure(toolsets: str) -> dict[str, Any]:
    return asyncio.run(measured(toolsets))


async def measured(toolsets: str) -> dict[str, Any]:
    """Tools, characters and icon characters of `tools/list`, in total and per toolset."""
    tools = await listed(toolsets)
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://x.example",
        nextcloud_username="a",
        nextcloud_mcp_toolsets=toolsets,
    )
    toolset_of = {spec.name: spec.toolset for spec in enabled_tools(settings)}
    toolset_of |= {TOOLSETS_TOOL: ON_DEMAND, CALL_TOOL: ON_DEMAND}
    per: dict[str, dict[str, int]] = defaultdict(lambda: {"tools": 0, "chars": 0, "icons": 0})
    for tool in tools:
        entry = per[toolset_of[tool["name"]]]
        entry["tools"] += 1
        entry["chars"] += chars(tool)
        entry["icons"] += chars(tool.get("icons", [])) + len(',"icons":') if "icons" in tool else 0
    total = chars({"tools": tools})
    icons = sum(entry["icons"] for entry in per.values())
    return {
        "toolsets": toolsets,
        "tools": len(tools),
        "chars": total,
        "icons": icons,
        "without_icons": total - icons,
        "per_toolset": dict(per),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    results = [measure("default"), measure("all")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for result in results:
        print(f"NEXTCLOUD_MCP_TOOLSETS={result['toolsets']}")
        print(f"  {'toolset':<12} {'tools':>5} {'chars':>8} {'icons':>7} {'per tool':>8}")
        for name, entry in result["per_toolset"].items():
            each = entry["chars"] // entry["tools"]
            print(f"  {name:<12} {entry['tools']:>5} {entry['chars']:>8} {entry['icons']:>7} {each:>8}")
        print(
            f"  {'total':<12} {result['tools']:>5} {result['chars']:>8} {result['icons']:>7}"
            f"   (without icons: {result['without_icons']})"
        )


if __name__ == "__main__":
    main()
