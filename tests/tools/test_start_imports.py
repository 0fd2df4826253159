"""A server started with the default toolsets imports the tools of no toolset served on demand
(docs/ADR/0093): what it needs of them before they are built comes from `toolsets/index.json`.
Checked in a new process, since this one has imported every toolset long ago: the start as
`nextcloud-mcp-bridge run` makes it (settings, runtime, server), then `tools/list`, then a tool
of an on-demand toolset built by name, which imports that toolset's tools and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, on_demand_toolsets
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
    server.built([sys.argv[1]])
    print(json.dumps({"listed": names, "at_start": at_start, "after_build": imported()}))
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
    assert found["at_start"] == sorted(DEFAULT_TOOLSETS)  # the listed toolsets' tools only
    assert found["after_build"] == sorted([*DEFAULT_TOOLSETS, "deck"])  # built by name: imported now
