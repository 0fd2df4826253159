"""Toolsets on demand against the real Nextcloud 29 and 34 with the apps (docs/ADR/0070): with
the default settings a client asks for Tables and calls one of its tools in the same
conversation; Collectives, whose API needs Nextcloud 30, is neither offered nor listed on 29,
and says why."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.tools import toolset_tools
from nextcloud_mcp_server.tools._on_demand import TOOLSETS_TOOL
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration

TABLES = {spec.name for spec in toolset_tools("tables")}
COLLECTIVES = {spec.name for spec in toolset_tools("collectives")}


async def test_a_client_asks_for_tables_and_is_never_offered_what_cannot_work(
    apps_nextcloud: Nextcloud,
) -> None:
    nextcloud = apps_nextcloud
    with running_app(nextcloud.settings(nextcloud.alice)) as base:
        async with http_session(f"{base}/mcp") as session:
            before = {tool.name for tool in (await session.list_tools()).tools}
            assert not before & (TABLES | COLLECTIVES)
            offered = structured(await session.call_tool(TOOLSETS_TOOL, {}))
            names = {entry["name"] for entry in offered["toolsets"]}
            assert {"deck", "tables", "talk"} <= names
            why = {entry["name"]: entry["why"] for entry in offered.get("not_available", [])}
            if nextcloud.major < 30:
                assert "collectives" not in names
                assert "needs Nextcloud 30 or later" in why["collectives"]
            else:
                assert "collectives" in names
            enabled = structured(await session.call_tool(TOOLSETS_TOOL, {"enable": ["tables"]}))
            assert {tool["name"] for tool in enabled["tools_enabled_now"]} == TABLES
            assert {tool.name for tool in (await session.list_tools()).tools} == before | TABLES
            tables = await session.call_tool("nc_tables_list_tables", {})
            assert not tables.is_error, tables.content
            if nextcloud.major < 30:
                refused = await session.call_tool(TOOLSETS_TOOL, {"enable": ["collectives"]})
                assert refused.is_error
                assert "needs Nextcloud 30 or later" in refused.content[0].text  # type: ignore[union-attr]
    with running_app(nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets="all")) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = {tool.name for tool in (await session.list_tools()).tools}
    assert listed >= TABLES
    assert bool(listed & COLLECTIVES) == (nextcloud.major >= 30)
