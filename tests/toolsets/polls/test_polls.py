"""The Polls toolset end to end: the SDK's client, the server, and the real Polls 7.5.0 (Nextcloud
29, plain REST) and 9.2.0 (Nextcloud 34, OCS); every change is checked through Polls' own API."""

from __future__ import annotations

from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.polls.tools import checked_options
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

TOOLS = {
    "nc_polls_list_polls": ("polls:read", True, False),
    "nc_polls_get_poll": ("polls:read", True, False),
    "nc_polls_create_poll": ("polls:write", False, False),
    "nc_polls_vote": ("polls:write", False, False),
    "nc_polls_delete_poll": ("polls:write", False, True),
}


def _api(nextcloud: Nextcloud, path: str) -> tuple[int, Any]:
    """Polls' own answer (its data) in the dialect of the release."""
    ocs = nextcloud.major >= 34
    base = "/ocs/v2.php/apps/polls/api/v1.0" if ocs else "/index.php/apps/polls/api/v1.0"
    with nextcloud.http(nextcloud.alice) as http:
        got = http.get(
            f"{base}{path}",
            params={"format": "json"} if ocs else None,
            headers={"Accept": "application/json"},
        )
    body = got.json()
    return got.status_code, body["ocs"]["data"] if ocs else body


@pytest.mark.parametrize("options", [[], ["Pizza", " "], ["Pizza", "Pizza "], ["Pi\u202ezza"]])
def test_options_are_checked_before_any_request(options: list[str]) -> None:
    with pytest.raises(InvalidInput):
        checked_options(options)


async def test_create_a_poll_vote_and_delete_it(apps_nextcloud: Nextcloud) -> None:
    """The five tools with their scopes; a poll created with its options is stored so; a vote is
    counted; the delete asks, naming the poll and its votes, and is done only when approved."""
    nc = apps_nextcloud
    human = Human()
    config = nc.settings(nc.alice, nextcloud_mcp_toolsets="polls")
    with running_app(config) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == set(TOOLS)
            for name, (scope, read_only, destructive) in TOOLS.items():
                assert tools[name].meta is not None
                assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
                assert tools[name].annotations is not None
                assert tools[name].annotations.read_only_hint is read_only
                assert tools[name].annotations.destructive_hint is destructive

            made = structured(
                await session.call_tool(
                    "nc_polls_create_poll", {"title": "Lunch", "options": ["Pizza", "Sushi"]}
                )
            )
            poll_id = made["id"]
            status, options = _api(nc, f"/poll/{poll_id}/options")
            assert status == 200
            assert [o["text"] for o in options["options"]] == ["Pizza", "Sushi"]
            listed = structured(await session.call_tool("nc_polls_list_polls", {}))
            assert [p["title"] for p in listed["polls"] if p["id"] == poll_id] == ["Lunch"]

            pizza = made["options"][0]["id"]
            voted = structured(
                await session.call_tool(
                    "nc_polls_vote", {"poll_id": poll_id, "option_id": pizza, "answer": "yes"}
                )
            )
            assert voted["options"][0]["yes"] == 1
            _, votes = _api(nc, f"/poll/{poll_id}/votes")
            assert [(v["optionId"], v["answer"]) for v in votes["votes"]] == [(pizza, "yes")]
            elsewhere = await session.call_tool(
                "nc_polls_vote", {"poll_id": poll_id, "option_id": pizza + 1000, "answer": "yes"}
            )
            assert elsewhere.is_error

            human.approve = False
            declined = await session.call_tool("nc_polls_delete_poll", {"poll_id": poll_id})
            assert declined.is_error
            assert human.questions[-1] == 'Delete the poll "Lunch" with its 2 options and 1 votes?'
            assert _api(nc, f"/poll/{poll_id}")[0] == 200
            human.approve = True
            structured(await session.call_tool("nc_polls_delete_poll", {"poll_id": poll_id}))
            assert _api(nc, f"/poll/{poll_id}")[0] in (400, 404)
            gone = await session.call_tool("nc_polls_get_poll", {"poll_id": poll_id})
            assert gone.is_error
            assert f"poll {poll_id} does not exist" in str(gone.content[0].text)  # type: ignore[union-attr]
