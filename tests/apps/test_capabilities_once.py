"""The capabilities are asked once per user and process while recent (ADR 0094): the apps check
asks them anyway, and Polls reads its dialect from what it was told. No Nextcloud needed: each
test declares the requests allowed, and the routes count them."""

from __future__ import annotations

from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.apps import enabled_apps
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache, Recent
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.polls import client as polls_client
from nextcloud_mcp_server.toolsets.polls import tools as polls_tools
from tests import http_mock
from tests.apps.answers import ALICE, BASE, POLLS, ocs, option, poll


@pytest.fixture
def nextcloud(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's Polls dialect, fresh for each test."""
    monkeypatch.setattr(polls_client, "dialects", polls_client.Dialects())


@http_mock.mock
async def test_a_new_poll_after_the_apps_check_asks_no_capabilities(
    http: NextcloudHTTP, nextcloud: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The apps check (which toolsets a user may see) asks the capabilities anyway; the Polls
    dialect is read from what it was told, so creating a poll in a new process makes only the
    poll's and its options' requests (3, as bench/apps/minimum.py says). Another user's
    capabilities are their own question (ADR 0094)."""
    shared = DiscoveryCache()

    async def nextcloud_for(ctx: Any) -> NextcloudClient:
        return NextcloudClient(http, ALICE, cache=shared)

    monkeypatch.setattr(polls_tools, "nextcloud_for", nextcloud_for)
    http_mock.get(f"{BASE}/ocs/v2.php/core/navigation/apps").mock(return_value=ocs([{"id": "polls"}]))
    capabilities = http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=ocs({"version": {"major": 34}, "capabilities": {"polls": {"version": "9.2.0"}}})
    )
    http_mock.post(f"{POLLS}/poll").mock(return_value=ocs({"poll": poll()}))
    http_mock.post(f"{POLLS}/poll/7/option").mock(
        side_effect=[ocs({"option": option(1, "Pizza")}), ocs({"option": option(2, "Sushi")})]
    )
    assert "polls" in await enabled_apps(NextcloudClient(http, ALICE, cache=shared).ocs)
    assert capabilities.call_count == 1
    answer = await polls_tools.nc_polls_create_poll("Lunch", ["Pizza", "Sushi"], ctx=None)  # type: ignore[arg-type]
    assert [o.text for o in answer.options] == ["Pizza", "Sushi"]
    assert capabilities.call_count == 1  # asked again here before: 4 requests
    bob = NextcloudClient(http, BasicCredential("bob", "pw"), cache=shared).ocs
    assert "polls" in (await bob.recent_capabilities())["capabilities"]
    assert capabilities.call_count == 2


async def test_recent_capabilities_are_kept_for_their_seconds_per_user() -> None:
    now = [0.0]
    recent = Recent(300, limit=2, clock=lambda: now[0])
    asked: list[str] = []

    def ask(user: str) -> Any:
        async def question() -> dict[str, Any]:
            asked.append(user)
            return {"user": user}

        return question

    assert await recent.once("alice", ask("alice")) == {"user": "alice"}
    assert await recent.once("alice", ask("alice")) == {"user": "alice"}
    assert await recent.once("bob", ask("bob")) == {"user": "bob"}
    assert asked == ["alice", "bob"]
    recent.put("carol", {})  # at most two users: the oldest answer goes
    assert (recent.get("alice"), recent.get("bob")) == (None, {"user": "bob"})
    now[0] = 301.0
    assert recent.get("bob") is None
    await recent.once("bob", ask("bob"))
    assert asked == ["alice", "bob", "bob"]
