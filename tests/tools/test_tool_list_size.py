"""The `tools/list` a model sees by default stays small (issue 28; measured by
bench/tool_list_size.py, docs/ADR/0042-toolsets-by-app.md)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from tool_list_size import chars, measure, measured

from tests.mcp_clients import http_session

# Measured 89,875 characters (68,799 without the icons) for 42 tools: the default toolsets' 40
# (87,346 and 67,500) and the two that reach every other toolset on demand (docs/ADR/0070); every
# asking tool links the approval view (ADR 0077): 10 more default tools carry `_meta.ui` (about
# 110 characters each). A little room for wording. Issue 43's ceiling for what a model reads by
# default: 72,495 without icons.
DEFAULT_BUDGET = 92_000
DEFAULT_BUDGET_WITHOUT_ICONS = 70_500
ON_DEMAND_BUDGET = 1_500  # nc_toolsets and nc_call_tool together, without their icons
# What one tool of any toolset costs on average, icons included (contacts, the largest: 2,699).
PER_TOOL_BUDGET = 3_000


def test_the_default_list_stays_within_its_budget() -> None:
    default = measure("default")
    assert default["tools"] == 42
    assert default["chars"] <= DEFAULT_BUDGET, default
    assert default["without_icons"] <= DEFAULT_BUDGET_WITHOUT_ICONS, default
    on_demand = default["per_toolset"]["on demand"]
    assert on_demand["chars"] - on_demand["icons"] <= ON_DEMAND_BUDGET, default


def test_every_toolset_keeps_its_tools_small() -> None:
    """Short descriptions and lean schemas for every toolset `all` offers, app toolsets too."""
    for name, entry in measure("all")["per_toolset"].items():
        assert entry["chars"] / entry["tools"] <= PER_TOOL_BUDGET, (name, entry)


async def test_the_measure_is_what_a_client_receives(mcp_url: str) -> None:
    """The SDK's client over streamable HTTP gets the same tools, to the character."""
    async with http_session(mcp_url) as session:
        received = (await session.list_tools()).tools
    tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in received]
    assert chars({"tools": tools}) == (await measured("default"))["chars"]
