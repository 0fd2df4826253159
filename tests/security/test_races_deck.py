"""The approval race suite (see test_approval_races.py) for deleting a Deck board, on the real
Nextcloud 29 and 34 with Deck: while the person is asked, the board is renamed, a card is added
to it, or it is shared with another user; the board is not deleted. (A card changed while asked
is in tests/toolsets/deck/test_deck_deletions.py.)"""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human
from tests.toolsets.deck.deck_api import API, deck, refused, session


@pytest.mark.parametrize("change", ["renamed", "a card added", "shared with a user"])
async def test_a_board_is_not_deleted_after_a_change_while_asked(
    apps_nextcloud: Nextcloud, change: str
) -> None:
    with deck(apps_nextcloud) as api:
        board = api.board("Garden")
        todo = board["stack_ids"][0]
        api.card(board, todo, "Cut the hedge")

        async def race() -> None:
            if change == "renamed":
                api.call(
                    "PUT",
                    f"{API}/boards/{board['id']}",
                    json={"title": "Garden (shared)", "color": "0082c9", "archived": False},
                )
            elif change == "a card added":
                api.card(board, todo, "Water the roses")
            else:
                acl = {
                    "type": 0,
                    "participant": "admin",
                    "permissionEdit": True,
                    "permissionShare": False,
                    "permissionManage": False,
                }
                api.call("POST", f"{API}/boards/{board['id']}/acl", json=acl)

        human = Human(while_asked=race)
        async with session(apps_nextcloud, human=human) as client:
            said = await refused(client, "nc_deck_delete_board", board_id=board["id"])
        assert "changed while you were being asked" in said
        assert len(human.questions) == 1
        left = api.call("GET", f"{API}/boards/{board['id']}")
        assert not left["deletedAt"]
