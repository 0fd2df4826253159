"""What the Collectives tools share: the toolset, the ids they take, the caller's client, and
when an edit surely removes nothing."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient

__all__ = ["CollectiveId", "PageId", "client_for", "keeps_most", "toolset"]

toolset = Toolset("collectives")

CollectiveId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The collective's id, as listed")]
PageId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The page's id, as listed")]


async def client_for(ctx: Context[Any, Any]) -> CollectivesClient:
    nc = await nextcloud_for(ctx)
    return await nc.dav_api(CollectivesClient)


def keeps_most(size: int | None, content: str) -> bool:
    """Whether replacing a page of `size` bytes by `content` surely asks nothing (`shrinks` on its
    text, or its size in bytes when longer than is read): it had no text, or the new text has at
    least half as many characters as the old one had bytes (a character is one byte or more).
    Unknown size: not sure, so the page is read."""
    if size is None or size < 0:
        return False
    return size == 0 or (bool(content.strip()) and len(content) >= size // 2)
