"""The Calendar toolset's tools: events (`tools_events.py`), free time (`tools_free_time.py`) and
tasks (`tools_tasks.py`), registered on the one toolset of `tools_common.py` in the order
`tools/list` shows them (the order of the imports below)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets.calendar import tools_events, tools_free_time, tools_tasks
from nextcloud_mcp_server.toolsets.calendar.tools_common import toolset

__all__ = ["tools_events", "tools_free_time", "tools_tasks", "toolset"]
