"""The Calendar toolset's tools: events and free time (`tools_events.py`) and tasks
(`tools_tasks.py`), registered on the one toolset of `tools_common.py` in the order `tools/list`
shows them."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets.calendar import tools_events, tools_tasks
from nextcloud_mcp_server.toolsets.calendar.tools_common import toolset

__all__ = ["tools_events", "tools_tasks", "toolset"]
