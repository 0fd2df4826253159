"""`build_server(settings, runtime)`: the MCP server with its toolsets registered.

This is the only module that constructs the SDK's server class.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.tools import enabled_tools

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "build_server"]

SERVER_NAME = "nextcloud-mcp-server"
INSTRUCTIONS = (
    "Tools for the user's own Nextcloud. Notes: find a note with nc_notes_search_notes or "
    "nc_notes_list_notes, read it with nc_notes_get_note, and pass its etag to "
    "nc_notes_update_note; prefer nc_notes_append_content for adding text. When an update is "
    "refused as a conflict, the current note comes back with the error: merge and retry."
)


def build_server(settings: Settings, runtime: Runtime) -> MCPServer[Runtime]:
    """An `MCPServer` whose lifespan yields `runtime` (opened and closed by the caller)."""

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[Runtime]:
        yield runtime

    middleware = []
    if settings.oauth_enabled:
        from nextcloud_mcp_server.auth.resource_server import tool_list_filter

        middleware.append(tool_list_filter)
    server: MCPServer[Runtime] = MCPServer(
        SERVER_NAME,
        title="Nextcloud",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level=settings.log_level,
        middleware=middleware,
    )
    for spec in enabled_tools(settings):
        server.add_tool(
            spec.fn,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=spec.annotations,
            meta=spec.meta,
        )
    return server
