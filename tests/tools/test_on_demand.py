"""Toolsets that appear when needed (docs/ADR/0070): the default list stays as it was plus two
small tools; a caller enables a toolset with `nc_toolsets`, is told the list changed (handshake
era), and calls its tools by name or through `nc_call_tool` in the same conversation; the
2026-07-28 era (no sessions) keeps the enabled set per user. Real SDK clients against the double;
the real Nextclouds' flows are in tests/apps/test_on_demand_real.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client, types
from mcp.client.session import ClientSession

from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.config.settings import ConfigError
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, enabled_tools, on_demand_toolsets, toolset_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL, EnabledToolsets
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration

FIND = {spec.name for spec in toolset_tools("find")}
DEFAULT = {spec.name for spec in toolset_tools("notes")}


def _settings(base: Settings, **more: Any) -> Settings:
    return base.model_copy(update=more)


async def _names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


class Heard:
    """What a listening client was told: each `notifications/tools/list_changed`."""

    def __init__(self) -> None:
        self.changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(message, types.ToolListChangedNotification):
            self.changed += 1
        elif isinstance(message, types.ToolListChangedNotification):
            self.changed += 1


async def test_a_caller_enables_a_toolset_and_calls_it_in_the_same_conversation(settings: Settings) -> None:
    heard = Heard()
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp", message_handler=heard) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
            before = await _names(session)
            assert {TOOLSETS_TOOL, CALL_TOOL} <= before
            assert not before & FIND
            listed = structured(await session.call_tool(TOOLSETS_TOOL, {}))
            names = {entry["name"] for entry in listed["toolsets"]}
            assert "find" in names and "deck" in names
            assert not names & set(DEFAULT_TOOLSETS)
            assert heard.changed == 0  # listing changes nothing
            enabled = structured(await session.call_tool(TOOLSETS_TOOL, {"enable": ["find"]}))
            assert enabled["enabled_now"] == ["find"]
            described = {tool["name"]: tool for tool in enabled["tools_enabled_now"]}
            assert set(described) == FIND
            assert all(tool["input_schema"]["type"] == "object" for tool in described.values())
            assert heard.changed == 1
            after = await _names(session)
            assert after == before | FIND
            result = await session.call_tool("nc_find_status", {})
            assert not result.is_error, result.content
            through = await session.call_tool(CALL_TOOL, {"name": "nc_find_status", "arguments": {}})
            assert not through.is_error, through.content
            assert through.structured_content == result.structured_content
            structured(await session.call_tool(TOOLSETS_TOOL, {"disable": ["find"]}))
            assert heard.changed == 2
            assert await _names(session) == before
