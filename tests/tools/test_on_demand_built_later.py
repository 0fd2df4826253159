"""The tools of toolsets on demand are built when a caller enables their toolset or calls one of
them, not at start (docs/ADR/0092), and the lists and answers stay what they were (ADR 0070):
nothing listed before enabling, the same order after, and every served tool answers by name in
both protocol eras. Real SDK clients against the double."""

from __future__ import annotations

from typing import cast

import pytest
from mcp import Client

from nextcloud_mcp_server import server as server_module
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_listed, build_server
from nextcloud_mcp_server.tools import enabled_tools, on_demand_tools, toolset_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL
from tests.mcp_clients import http_session, running_app

pytestmark = pytest.mark.integration

FIND = [spec.name for spec in toolset_tools("find")]  # a core toolset: works on the double


def test_no_tool_of_a_toolset_on_demand_is_built_at_start(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_module, "_BUILT", {})  # as a new process: nothing built yet
    server = build_server(settings, cast(Runtime, None))
    later = {spec.name for spec in on_demand_tools(settings)}
    assert FIND[0] in later
    registered = {tool.name for tool in server._tool_manager.list_tools()}
    assert not registered & later
    assert {TOOLSETS_TOOL, CALL_TOOL} <= registered
    build_listed(server)  # the listed tools (ADR 0093: at start over HTTP, by the warm-up over stdio)
    built = {spec.name for spec, _ in server_module._BUILT.values()}
    assert not built & later
    assert {spec.name for spec in enabled_tools(settings)} <= built


async def test_called_by_name_or_enabled_a_toolset_answers_and_lists_as_before(settings: Settings) -> None:
    listed = [spec.name for spec in enabled_tools(settings)]
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            called = await session.call_tool("nc_find_status", {})  # never listed, never enabled
            assert not called.is_error, called.content
            bad = await session.call_tool("nc_find", {"query": ""})  # validated as before
            assert bad.is_error
            assert "query" in bad.content[0].text  # type: ignore[union-attr]
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == [*listed, TOOLSETS_TOOL, CALL_TOOL]  # called is not listed
            enabled = await session.call_tool(TOOLSETS_TOOL, {"enable": ["find"]})
            assert not enabled.is_error, enabled.content
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == [*listed, *FIND, TOOLSETS_TOOL, CALL_TOOL]  # the registry's order
    with running_app(settings) as base:  # a new server: nothing of `find` built in it yet
        async with Client(f"{base}/mcp", mode="2026-07-28") as client:
            called = await client.call_tool("nc_find_status", {})
            assert not called.is_error, called.content
            bad = await client.call_tool("nc_find", {"query": ""})
            assert bad.is_error
            assert not {tool.name for tool in (await client.list_tools()).tools} & set(FIND)
