"""The server advertises what it serves (docs/ADR/0067): no `prompts` without prompts, no resource
subscriptions or change streams on 2026-07-28 without serving them, and cache hints on list results
that a modern client's shared cache never uses to serve one user's list to another."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
from mcp.client.streamable_http import streamable_http_client

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL
from tests.mcp_clients import http_session, running_app
from tests.oauth_server import OAuthServer, server_fixture  # noqa: F401 - the fixture
from tests.oidc import IdP

pytestmark = pytest.mark.integration


def _no_prompts(settings: Settings) -> Settings:
    """Toolsets that bring no prompt (the calendar's and Deck's do: test_slash_prompts.py)."""
    return settings.model_copy(update={"nextcloud_mcp_toolsets": "notes,files"})


async def test_the_handshake_era_advertises_no_prompts_and_no_subscriptions(settings: Settings) -> None:
    with running_app(_no_prompts(settings)) as base:
        async with http_session(f"{base}/mcp") as session:
            capabilities = session.server_capabilities
    assert capabilities is not None
    assert capabilities.tools is not None
    assert capabilities.prompts is None
    assert capabilities.resources is not None
    assert not capabilities.resources.subscribe


async def test_the_stateless_era_advertises_no_prompts_and_no_change_streams(settings: Settings) -> None:
    with running_app(_no_prompts(settings)) as base:
        async with Client(f"{base}/mcp") as client:  # discovers the server's own capabilities
            capabilities = client.server_capabilities
            era = client.protocol_version
            listed = await client.list_tools()
    assert era == "2026-07-28"
    assert capabilities.prompts is None
    assert capabilities.resources is not None
    assert not capabilities.resources.subscribe
    assert not capabilities.resources.list_changed
    assert capabilities.tools is not None
    assert not capabilities.tools.list_changed
    assert (listed.ttl_ms, listed.cache_scope) == (60_000, "private")


async def test_a_shared_client_cache_never_serves_one_users_tool_list_to_another(
    server: OAuthServer,
    idp: IdP,
) -> None:
    """Two people whose clients share one response cache (as a gateway would), the cache told to
    share whatever the server calls public: each gets the tool list of their own token, because
    the server marks every list private."""
    store = InMemoryResponseCacheStore()
    seen: dict[str, set[str]] = {}
    for user, scope in (("admin", "notes:read"), ("alice", "files:read")):
        token = idp.access_token(user=user, resource=server.mcp, scope=scope)
        config = CacheConfig(store=store, partition=user, share_public=True, target_id=server.mcp)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
            Client(
                streamable_http_client(server.mcp, http_client=http), mode="2026-07-28", cache=config
            ) as client,
        ):
            first = await client.list_tools()
            again = await client.list_tools()  # served from the cache: the hint is honoured
            seen[user] = {tool.name for tool in first.tools}
            assert {tool.name for tool in again.tools} == seen[user]
            assert first.cache_scope == "private"
    for user, scope in (("admin", "notes:read"), ("alice", "files:read")):
        expected = {t.name for t in all_tools() if t.toolset in DEFAULT_TOOLSETS and set(t.scopes) <= {scope}}
        assert seen[user] == expected | {TOOLSETS_TOOL, CALL_TOOL}, user  # and the on-demand pair
    assert seen["admin"] != seen["alice"]
