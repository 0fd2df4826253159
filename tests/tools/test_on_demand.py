"""Toolsets that appear when needed (docs/ADR/0070): the default list is the default toolsets and
two small tools; a caller enables a toolset with `nc_toolsets`, is told the list changed
(handshake era), and calls its tools by name or through `nc_call_tool` in the same conversation;
clients of the 2026-07-28 era (no sessions) find the enabled set kept for their user. Real SDK
clients (Python in both eras, TypeScript) against the double; per-user state and scopes in OAuth
mode in tests/apps/test_on_demand_oauth.py; the real Nextclouds in tests/apps/test_on_demand_real.py."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, types
from mcp.client.session import ClientSession

from nextcloud_mcp_server.config import ConfigError, Settings, load_settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, offered_tools, on_demand_toolsets, toolset_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL, EnabledToolsets
from tests.backends import Login, Nextcloud
from tests.conftest import ADMIN_APP_PASSWORD, ADMIN_PASSWORD, ALICE_APP_PASSWORD, ALICE_PASSWORD
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble
from tests.ts_client import typescript_client

pytestmark = pytest.mark.integration

FIND = {spec.name for spec in toolset_tools("find")}  # a core toolset: works on the double


async def _names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


class Heard:
    """A listening client's message handler: counts `notifications/tools/list_changed`."""

    def __init__(self) -> None:
        self.changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.changed += 1


async def test_a_listening_client_enables_a_toolset_and_calls_it_in_the_same_conversation(
    settings: Settings,
) -> None:
    heard = Heard()
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp", message_handler=heard) as session:
            caps = session.server_capabilities
            assert caps is not None
            assert caps.tools is not None
            assert caps.tools.list_changed is True
            before = await _names(session)
            assert {TOOLSETS_TOOL, CALL_TOOL} <= before
            assert not before & FIND
            listed = structured(await session.call_tool(TOOLSETS_TOOL, {}))
            names = {entry["name"] for entry in listed["toolsets"]}
            assert {"find", "deck", "tables"} <= names
            assert not names & set(DEFAULT_TOOLSETS)
            assert not any(entry["enabled"] for entry in listed["toolsets"])
            assert heard.changed == 0  # listing changes nothing
            enabled = structured(await session.call_tool(TOOLSETS_TOOL, {"enable": [" Find "]}))  # a title
            assert enabled["enabled_now"] == ["find"]
            described = {tool["name"]: tool for tool in enabled["tools_enabled_now"]}
            assert set(described) == FIND
            assert described["nc_find"]["input_schema"]["required"] == ["query"]
            assert heard.changed == 1
            assert await _names(session) == before | FIND
            direct = await session.call_tool("nc_find_status", {})
            assert not direct.is_error, direct.content
            through = await session.call_tool(CALL_TOOL, {"name": "nc_find_status", "arguments": {}})
            assert not through.is_error, through.content
            assert through.structured_content == direct.structured_content
            again = structured(await session.call_tool(TOOLSETS_TOOL, {"enable": ["find"]}))
            assert "enabled_now" not in again
            assert heard.changed == 1
            structured(await session.call_tool(TOOLSETS_TOOL, {"disable": ["find"]}))
            assert heard.changed == 2
            assert await _names(session) == before


async def test_a_client_that_never_lists_again_calls_through(settings: Settings) -> None:
    """Listed or not, a served tool answers; `nc_call_tool` keeps every check of the tool."""
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            through = await session.call_tool(CALL_TOOL, {"name": "nc_find_status"})
            assert not through.is_error, through.content
            for name, said in [
                (CALL_TOOL, "call nc_call_tool directly"),
                ("nc_nothing_here", "Unknown tool"),
            ]:
                refused = await session.call_tool(CALL_TOOL, {"name": name, "arguments": {}})
                assert refused.is_error
                assert said in refused.content[0].text  # type: ignore[union-attr]
            bad = await session.call_tool(CALL_TOOL, {"name": "nc_find", "arguments": {"query": ""}})
            assert bad.is_error
            assert "query" in bad.content[0].text
            wrong = await session.call_tool(TOOLSETS_TOOL, {"enable": ["dekc", "find"]})
            assert wrong.is_error
            text = wrong.content[0].text  # type: ignore[union-attr]
            assert "'dekc'" in text
            assert "available: " in text
            assert "deck" in text
            assert "nothing was changed" in text
            assert not await _names(session) & FIND  # nothing was enabled
            too_many = await session.call_tool(TOOLSETS_TOOL, {"enable": ["find"] * 9})
            assert too_many.is_error


async def test_a_client_of_the_2026_era_finds_the_set_kept_for_its_user(settings: Settings) -> None:
    """No session: the enabled set is the user's, seen by their next request and next client."""
    with running_app(settings) as base:
        async with Client(f"{base}/mcp", mode="2026-07-28") as client:
            assert not {tool.name for tool in (await client.list_tools()).tools} & FIND
            result = await client.call_tool(TOOLSETS_TOOL, {"enable": ["find"]})
            assert not result.is_error, result.content
            assert {tool["name"] for tool in (result.structured_content or {})["tools_enabled_now"]} == FIND
            called = await client.call_tool("nc_find_status", {})
            assert not called.is_error, called.content
        async with Client(f"{base}/mcp", mode="2026-07-28") as later:
            assert {tool.name for tool in (await later.list_tools()).tools} >= FIND


def test_the_typescript_client_hears_the_change_and_calls_the_new_tools(settings: Settings) -> None:
    with running_app(settings) as base, typescript_client() as ts:
        before = set(ts.open("ts", f"{base}/mcp"))
        assert TOOLSETS_TOOL in before
        assert not before & FIND
        reply = ts.call("ts", TOOLSETS_TOOL, {"enable": ["find"]})
        assert not reply["result"].get("isError"), reply
        tools, changed = ts.list("ts")
        assert changed == 1
        assert set(tools) == before | FIND
        called = ts.call("ts", "nc_find_status", {})
        assert not called["result"].get("isError"), called


def _with(settings: Settings, **more: Any) -> Settings:
    return settings.model_copy(update=more)


def test_which_toolsets_are_on_demand(settings: Settings) -> None:
    everything = {spec.toolset for spec in offered_tools(_with(settings, nextcloud_mcp_toolsets="all"))}
    others = everything - set(DEFAULT_TOOLSETS)
    assert on_demand_toolsets(settings) == others  # the default: every other toolset
    assert on_demand_toolsets(_with(settings, nextcloud_mcp_toolsets="default,deck")) == others - {"deck"}
    assert on_demand_toolsets(_with(settings, nextcloud_mcp_toolsets="all")) == set()
    # naming toolsets one by one keeps the server to them (docs/ADR/0060)
    assert on_demand_toolsets(_with(settings, nextcloud_mcp_toolsets="deck")) == set()
    assert on_demand_toolsets(
        _with(settings, nextcloud_mcp_toolsets="deck", nextcloud_mcp_on_demand="tables")
    ) == {"tables"}
    typed = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="u",
        nextcloud_mcp_on_demand=" None ",
    )
    assert on_demand_toolsets(typed) == set()  # as typed into a form
    with pytest.raises(ConfigError) as refused:
        on_demand_toolsets(_with(settings, nextcloud_mcp_on_demand="dekc"))
    assert "NEXTCLOUD_MCP_ON_DEMAND: unknown toolset 'dekc'" in str(refused.value)


async def test_without_toolsets_on_demand_the_two_tools_are_not_served(settings: Settings) -> None:
    with running_app(_with(settings, nextcloud_mcp_on_demand="none")) as base:
        async with http_session(f"{base}/mcp") as session:
            names = await _names(session)
            caps = session.server_capabilities
    assert not {TOOLSETS_TOOL, CALL_TOOL} & names
    assert caps is not None
    assert caps.tools is not None
    assert not caps.tools.list_changed


def test_enabled_sets_are_bounded_and_forgotten_when_idle() -> None:
    now = [0.0]
    kept = EnabledToolsets(idle=10, max_users=2, clock=lambda: now[0])
    kept.set("alice", frozenset({"deck"}))
    kept.set("bob", frozenset({"talk"}))
    assert kept.of("alice") == {"deck"}  # alice used last
    kept.set("carol", frozenset({"tables"}))  # bob, least recently used, goes
    assert kept.of("bob") == frozenset()
    assert kept.of("alice") == {"deck"}
    assert kept.of("carol") == {"tables"}
    now[0] = 9.0
    assert kept.of("alice") == {"deck"}  # used: ten more seconds
    now[0] = 18.0
    assert kept.of("carol") == frozenset()  # idle for 18 s
    assert kept.of("alice") == {"deck"}
    kept.set("alice", frozenset())
    assert kept.of("alice") == frozenset()
    with pytest.raises(ValueError, match="positive lifetime"):
        EnabledToolsets(idle=0)


@pytest.fixture
def on_double(double: NextcloudDouble, double_url: str) -> Nextcloud:
    return Nextcloud(
        "double",
        double_url,
        Login("admin", ADMIN_PASSWORD, ADMIN_APP_PASSWORD, display_name="Admin"),
        Login("alice", ALICE_PASSWORD, ALICE_APP_PASSWORD, display_name="Alice"),
        double=double,
    )


async def test_approvals_hold_through_the_call_through_in_both_eras(
    settings: Settings, on_double: Nextcloud
) -> None:
    """A delete called through `nc_call_tool` asks the person exactly as called directly: the
    handshake era's elicitation and the 2026-07-28 era's input-required round."""
    admin = on_double.admin
    for name in ("kept.txt", "gone.txt", "modern.txt"):
        on_double.put_file(admin, name, b"x")
    no, yes, modern = Human(action="decline"), Human(), Human()
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=no.answer) as session:
            refused = await session.call_tool(
                CALL_TOOL, {"name": "nc_webdav_delete_resource", "arguments": {"path": "kept.txt"}}
            )
        async with http_session(f"{base}/mcp", elicitation_callback=yes.answer) as session:
            done = await session.call_tool(
                CALL_TOOL, {"name": "nc_webdav_delete_resource", "arguments": {"path": "gone.txt"}}
            )
        async with Client(f"{base}/mcp", mode="2026-07-28", elicitation_callback=modern.answer) as client:
            later = await client.call_tool(
                CALL_TOOL, {"name": "nc_webdav_delete_resource", "arguments": {"path": "modern.txt"}}
            )
    assert refused.is_error
    assert on_double.read_file(admin, "kept.txt") == b"x"
    assert not done.is_error, done.content
    assert on_double.read_file(admin, "gone.txt") is None
    assert not later.is_error, later.content
    assert on_double.read_file(admin, "modern.txt") is None
    assert [len(h.questions) for h in (no, yes, modern)] == [1, 1, 1]
    assert modern.questions[0].startswith("Delete the file /modern.txt")
