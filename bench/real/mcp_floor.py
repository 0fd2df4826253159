"""The floor served by a bare MCP server over stdio: one tool, `floor`, that runs a case's floor
(floors.py: the cheapest direct requests for the same answer) and returns what it counted.

It shows how much of this server's wall time above the floor is the MCP round trip itself (a
stdio message each way, the SDK's dispatch, a JSON result) rather than Nextcloud requests: the
same requests, no checks, no output models. Not a target; `measure.py` prints it beside the floor.

    NEXTCLOUD_HOST=... NEXTCLOUD_USERNAME=... NEXTCLOUD_PASSWORD=... BENCH_MANIFEST=... \\
        python bench/real/mcp_floor.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from floors import FLOORS, forget_cookies  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

_client: httpx.AsyncClient | None = None
_manifest: dict[str, Any] = json.loads(Path(os.environ["BENCH_MANIFEST"]).read_text())
server = MCPServer("bench-floor")


@server.tool()
async def floor(case: str) -> dict[str, int]:
    """Run the floor of `case` (an id of cases.py) and return the number it checks."""
    global _client
    if _client is None:
        _client = forget_cookies(
            httpx.AsyncClient(
                base_url=os.environ["NEXTCLOUD_HOST"],
                auth=(os.environ["NEXTCLOUD_USERNAME"], os.environ["NEXTCLOUD_PASSWORD"]),
                timeout=120,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
        )
    return {"answer": await FLOORS[case](_client, os.environ["NEXTCLOUD_USERNAME"], _manifest)}


if __name__ == "__main__":
    server.run("stdio")
