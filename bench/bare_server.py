"""The floor for comparisons: a bare MCPServer with one tool. Over stdio (cold start), or with
`--http PORT` over streamable HTTP at /mcp (the SDK's own cost of a tools/call, bench/profile_call.py).
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
