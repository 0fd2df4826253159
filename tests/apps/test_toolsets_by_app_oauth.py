"""In OAuth mode a user sees the tools their token's scopes allow AND whose app they have: the two
filters of `tools/list` combine (a real OpenID provider, the double, the SDK client). The double
has no navigation endpoint, so the apps each user has are given here, per user."""

from __future__ import annotations

from typing import Any

import pytest

import nextcloud_mcp_server.tools._apps as apps_module
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.tools import all_tools
from tests.apps.test_toolsets_by_app import _names, _stand_ins, _text
from tests.mcp_clients import http_session
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import oauth_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration

__all__ = ["_stand_ins"]  # the stand-in toolsets `deck` and `tags`, as a fixture

APPS = {"admin": frozenset({"systemtags"}), "alice": frozenset({"deck", "systemtags"})}


@pytest.fixture
def asked_for(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []

    async def enabled_apps(ocs: OCSClient) -> frozenset[str]:
        user = ocs._credential.user_id if ocs._credential is not None else ""
        asked.append(user)
        return APPS[user]

    monkeypatch.setattr(apps_module, "enabled_apps", enabled_apps)
    return asked


async def test_scopes_and_apps_both_filter_the_list(
    double: NextcloudDouble, double_url: str, idp: IdP, asked_for: list[str]
) -> None:
    with oauth_server(double, double_url, idp, nextcloud_mcp_toolsets="all") as server:
        seen: dict[str, set[str]] = {}
        for user in ("admin", "alice"):
            token = idp.access_token(user=user, resource=server.mcp, scope="notes:read")
            headers: dict[str, Any] = {"Authorization": f"Bearer {token}"}
            async with http_session(server.mcp, headers=headers) as session:
                seen[user] = await _names(session)
                if user == "admin":
                    failed, text = await _text(session, "nc_deck_whoami")
                    assert failed
                    assert "Deck is not installed or not enabled for you" in text
    stand_ins = {"nc_deck_whoami", "nc_tags_whoami"}  # all_tools() shows them too (the fixture)
    reading = {spec.name for spec in all_tools() if set(spec.scopes) <= {"notes:read"}} - stand_ins
    assert seen["admin"] == reading | {"nc_tags_whoami"}
    assert seen["alice"] == reading | {"nc_tags_whoami", "nc_deck_whoami"}
    assert sorted(asked_for) == ["admin", "alice"]  # once per user
