"""A card whose label the target board lacks, moved to a board the caller may edit but not manage:
Deck lets only managers add a label. The move took the labels off, moved the card, then failed
to add the label and answered "refused", with the card gone over without its label. It is now
refused before anything moves. Real Nextcloud 29 and 34, the board shared by admin through Deck's
own API."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human
from tests.toolsets.deck.deck_api import API, call, deck, refused, session

pytestmark = pytest.mark.integration


async def test_a_card_whose_label_cannot_follow_is_not_moved(apps_nextcloud: Nextcloud) -> None:
    with apps_nextcloud.http(apps_nextcloud.admin) as admin:
        theirs = admin.post(f"{API}/boards", json={"title": "Admin's", "color": "0082c9"}).json()
        todo = admin.post(f"{API}/boards/{theirs['id']}/stacks", json={"title": "To do", "order": 0}).json()
        shared = {"type": 0, "participant": "alice", "permissionEdit": True}
        granted = admin.post(
            f"{API}/boards/{theirs['id']}/acl",
            json={**shared, "permissionShare": False, "permissionManage": False},
        )
        assert granted.is_success, granted.text[:300]
    with deck(apps_nextcloud) as api:
        mine = api.board("Mine", stacks=("Ideas",))
        ideas = mine["stack_ids"][0]
        async with session(apps_nextcloud, human=Human(approve=True)) as client:
            await call(client, "nc_deck_update_board", board_id=mine["id"], add_labels=["Press"])
            card = await call(
                client, "nc_deck_create_card", board_id=mine["id"], stack_id=ideas, title="Teaser"
            )
            ids = {"board_id": mine["id"], "stack_id": ideas, "card_id": card["id"]}
            await call(client, "nc_deck_update_card", **ids, add_labels=["Press"])
            said = await refused(
                client, "nc_deck_move_card", **ids, to_board_id=theirs["id"], to_stack_id=todo["id"]
            )
        assert "only its managers may add one" in said, said
        assert "Nothing was moved" in said
        stored = api.get_card(mine["id"], ideas, card["id"]).json()
        assert [label["title"] for label in stored["labels"]] == ["Press"]
        assert api.stacks(mine["id"])[ideas] == [card["id"]]
