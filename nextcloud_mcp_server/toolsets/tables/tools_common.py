"""The Tables toolset that `tools.py` (rows) and `tools_create.py` (tables and columns) register on."""

from __future__ import annotations

from nextcloud_mcp_server.tools._registry import Toolset

__all__ = ["toolset"]

toolset = Toolset("tables")
