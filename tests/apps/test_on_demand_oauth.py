"""Toolsets on demand in OAuth mode (docs/ADR/0070): what one user enables is theirs alone, a
toolset of an app a user lacks cannot be enabled, and scopes still decide which tools are listed
and run, through `nc_call_tool` too (a real OpenID provider, the double, the SDK client). The
double has no navigation endpoint, so the apps each user has are given here, per user."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import MCPError

import nextcloud_mcp_server.tools._apps as apps_module
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.tools import toolset_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import oauth_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration

APPS = {"admin": frozenset({"deck", "systemtags"}), "alice": frozenset({"deck", "tables", "systemtags"})}
SCOPES = "notes:read deck:read"
DECK_READING = {spec.name for spec in toolset_tools("deck") if spec.scopes == ("deck:read",)}


@pytest.fixture(autouse=True)
def _apps_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    async def enabled_apps(ocs: OCSClient) -> frozenset[str]:
        return APPS[ocs._credential.user_id if ocs._credential is not None else ""]

    monkeypatch.setattr(apps_module, "enabled_apps", enabled_apps)


async def test_each_user_enables_for_themselves_within_their_apps_and_scopes(
    double: NextcloudDouble, double_url: str, idp: IdP
) -> None:
    with oauth_server(double, double_url, idp) as server:

        def headers(user: str) -> dict[str, Any]:
            return {
                "Authorization": f"Bearer {idp.access_token(user=user, resource=server.mcp, scope=SCOPES)}"
            }

        async with (
            http_session(server.mcp, headers=headers("alice")) as alice,
            http_session(server.mcp, headers=headers("admin")) as admin,
        ):
            admin_before = {tool.name for tool in (await admin.list_tools()).tools}
            offered = structured(await alice.call_tool(TOOLSETS_TOOL, {}))
            assert "deck" in {entry["name"] for entry in offered["toolsets"]}
            why = {entry["name"]: entry["why"] for entry in offered["not_available"]}
            assert "lacks its scopes (tables:read)" in why["tables"]  # her app, not her token's scope
            assert "Talk is not installed or not enabled for you" in why["talk"]
            structured(await alice.call_tool(TOOLSETS_TOOL, {"enable": ["deck"]}))
            listed = {tool.name for tool in (await alice.list_tools()).tools}
            assert listed >= DECK_READING
            assert "nc_deck_create_card" not in listed  # deck:write was not granted
            # the other user's list and choices are untouched
            assert {tool.name for tool in (await admin.list_tools()).tools} == admin_before
            theirs = structured(await admin.call_tool(TOOLSETS_TOOL, {}))
            assert not any(entry["enabled"] for entry in theirs["toolsets"])
            assert "deck" in {entry["name"] for entry in theirs["toolsets"]}
            refused = await admin.call_tool(TOOLSETS_TOOL, {"enable": ["talk"]})
            assert refused.is_error
            assert "Talk is not installed or not enabled for you" in refused.content[0].text  # type: ignore[union-attr]
            # calling through is held to the called tool's scopes: the step-up answer, nothing run
            with pytest.raises(MCPError):
                await alice.call_tool(CALL_TOOL, {"name": "nc_deck_create_card", "arguments": {}})
