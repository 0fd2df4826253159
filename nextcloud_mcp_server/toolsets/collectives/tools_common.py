"""What the Collectives tools share: the toolset, the ids they take, the caller's client."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient

__all__ = ["CollectiveId", "PageId", "client_for", "toolset"]

toolset = Toolset("collectives")

CollectiveId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The collective's id, as listed")]
PageId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The page's id, as listed")]


async def client_for(ctx: Context[Any, Any]) -> CollectivesClient:
    nc = await nextcloud_for(ctx)
    return await nc.dav_api(CollectivesClient)
