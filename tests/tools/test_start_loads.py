"""What a start loads (docs/ADR/0093). A server started with the default toolsets imports the
tools of no toolset served on demand (what it needs of them comes from `toolsets/index.json`),
imports of the listed toolsets' tools only what the resources reuse, and builds none of its
tools: the listed ones are listed from `toolsets/listing.jsonl`, exactly as they are listed once
built. The imports are checked in a new process, since this one has imported every toolset long
ago: the start as `nextcloud-mcp-bridge run` makes it (settings, runtime, server), then
`tools/list`, then a tool of an on-demand toolset built by name, which imports that toolset's
tools and nothing else."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from typing import cast

import pytest

from nextcloud_mcp_server import server as server_module
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_listed, build_server
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, enabled_tools, on_demand_toolsets, toolset_tools
from nextcloud_mcp_server.toolsets import indexed

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys

    from mcp import Client

    from nextcloud_mcp_server.config import load_settings
    from nextcloud_mcp_server.runtime import Runtime
    from nextcloud_mcp_server.server import build_server
    from nextcloud_mcp_server.tools import tool_scopes

    def imported():
        prefix = "nextcloud_mcp_server.toolsets."
        return sorted(
            {name[len(prefix):].split(".")[0] for name in sys.modules
             if name.startswith(prefix) and name.split(".")[3:4] and name.split(".")[3].startswith("tools")}
        )

    settings = load_settings(
        env_file=None, nextcloud_host="http://127.0.0.1:9", nextcloud_username="someone",
        nextcloud_password="not-used",
    )
    server = build_server(settings, Runtime(settings, scopes=tool_scopes(settings)))

    async def listed():
        async with Client(server) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = asyncio.run(listed())
    at_start = imported()
    registered = sorted(server._tool_manager._tools)
    server.built([sys.argv[1]])
    print(json.dumps(
        {"listed": names, "at_start": at_start, "registered": registered, "after_build": imported()}
    ))
    """
)


def test_a_default_start_imports_no_toolset_served_on_demand() -> None:
    settings = load_settings(
        env_file=None, nextcloud_host="http://127.0.0.1:9", nextcloud_username="u", nextcloud_password="p"
    )
    assert "deck" in on_demand_toolsets(settings)  # the default settings serve it on demand
    deck_tool = indexed("deck")[0].name
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, deck_tool], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "nc_toolsets" in found["listed"]
    assert len(found["listed"]) == len(enabled_tools(settings)) + 2
    assert found["registered"] == ["nc_call_tool", "nc_toolsets"]  # nothing else built
    # of the listed toolsets' tools, at most what the resources reuse (calendar's, files')
    assert set(found["at_start"]) <= set(DEFAULT_TOOLSETS)
    assert found["after_build"] == sorted([*found["at_start"], "deck"])  # built by name: imported now


@pytest.mark.parametrize("toolsets", ["default", "all"])
async def test_the_listed_tools_are_listed_as_they_are_once_built(toolsets: str) -> None:
    settings = Settings(nextcloud_host="https://cloud.example.com", nextcloud_mcp_toolsets=toolsets)
    server = build_server(settings, cast(Runtime, None))
    before = [tool.model_dump(by_alias=True, exclude_none=True) for tool in await server.list_tools()]
    assert len(server._tool_manager.list_tools()) <= 2  # at most nc_toolsets and nc_call_tool
    build_listed(server)
    assert len(server._tool_manager.list_tools()) == len(before)
    after = [tool.model_dump(by_alias=True, exclude_none=True) for tool in await server.list_tools()]
    assert [tool["name"] for tool in after] == [tool["name"] for tool in before]
    assert after == before


def test_a_tool_the_listing_does_not_show_as_declared_is_built_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stand-in under a real tool's name (as tests make them) is no tool the listing shows."""
    real = toolset_tools("notes")[0]
    stand_in = dataclasses.replace(real, title="Another")
    monkeypatch.setattr(server_module, "offered_tools", lambda settings: [stand_in])
    monkeypatch.setattr(server_module, "on_demand_tools", lambda settings: [])
    server = build_server(Settings(nextcloud_host="https://cloud.example.com"), cast(Runtime, None))
    [built] = server._tool_manager.list_tools()
    assert (built.name, built.title) == (real.name, "Another")
