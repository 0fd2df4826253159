"""The MCP surface: one module per toolset. Tools know nothing of HTTP details."""

from __future__ import annotations

from nextcloud_mcp_server.tools._registry import ToolSpec

__all__ = ["all_tools"]


def all_tools() -> list[ToolSpec]:
    """Every tool of every toolset, in a stable order."""
    from nextcloud_mcp_server.tools import notes

    return [spec for toolset in (notes.toolset,) for spec in toolset.specs]
