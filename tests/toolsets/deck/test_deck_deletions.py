"""Deck's deletions and its absence, end to end on the real Nextcloud 29 and 34: deleting a card, a
stack, a label or a board asks the human first and is bound to what was shown; without Deck the
tools say so."""

from __future__ import annotations

import time

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human
from tests.toolsets.deck.deck_api import API, call, deck, refused, session

pytestmark = pytest.mark.integration


async def test_deleting_a_card_a_stack_a_label_or_a_board_asks_the_human(apps_nextcloud: Nextcloud) -> None:
    """Each delete asks, bound to what it reads (a stack's cards and a label's cards, archived ones
    too); a decline leaves all in place."""
    with deck(apps_nextcloud) as api:
        board = api.board("Garden")
        todo, done = board["stack_ids"][0], board["stack_ids"][2]
        card = api.card(board, todo, "Cut the hedge")
        ids = {"board_id": board["id"], "stack_id": todo, "card_id": card["id"]}
        labels = api.call("GET", f"{API}/boards/{board['id']}")["labels"]
        later = next(lb["id"] for lb in labels if lb["title"] == "Later")
        old = api.card(board, done, "Last year's bulbs")
        for one, stack in ((card, todo), (old, done)):
            api.call(
                "PUT",
                f"{API}/boards/{board['id']}/stacks/{stack}/cards/{one['id']}/assignLabel",
                json={"labelId": later},
            )
        no = Human(approve=False)
        async with session(apps_nextcloud, human=no) as client:
            # Deck 1.13 has no archive route of its own: archived as a client would
            stored = {"board_id": board["id"], "stack_id": done, "card_id": old["id"]}
            await call(client, "nc_deck_update_card", **stored, archived=True)
            said = await refused(client, "nc_deck_delete_card", **ids)
            await refused(client, "nc_deck_delete_label", board_id=board["id"], label="later")
            await refused(client, "nc_deck_delete_stack", board_id=board["id"], stack_id=done)
        assert "Nothing was changed" in said
        assert no.questions == [
            'Delete the card "Cut the hedge" in stack "To do" of board "Garden"?',
            'Delete the label "Later" of the board "Garden"? It comes off the 2 cards that carry it.',
            'Delete the stack "Done" of the board "Garden" with its 1 cards (1 of them archived)?',
        ]
        assert api.stacks(board["id"])[todo] == [card["id"]]
        assert done in api.stacks(board["id"])
        assert "Later" in [lb["title"] for lb in api.call("GET", f"{API}/boards/{board['id']}")["labels"]]

        yes = Human()
        async with session(apps_nextcloud, human=yes) as client:
            gone = await call(client, "nc_deck_delete_label", board_id=board["id"], label="Later")
            assert (gone["id"], gone["cards"]) == (later, 2)
            read = api.get_card(board["id"], todo, card["id"]).json()
            assert read["labels"] in ([], None)
            assert "Later" not in [
                lb["title"] for lb in api.call("GET", f"{API}/boards/{board['id']}")["labels"]
            ]
            stack = await call(client, "nc_deck_delete_stack", board_id=board["id"], stack_id=done)
            assert (stack["title"], stack["cards"]) == ("Done", 1)
            assert done not in api.stacks(board["id"])
            assert (await call(client, "nc_deck_delete_card", **ids))["deleted"] is True
            assert api.stacks(board["id"])[todo] == []
            api.card(board, todo, "Water the roses")
            await call(client, "nc_deck_delete_board", board_id=board["id"])
        assert yes.questions[-1] == 'Delete the board "Garden" with its 2 stacks and 1 cards?'
        left = api.call("GET", f"{API}/boards")
        assert [b["id"] for b in left if b["id"] == board["id"] and not b["deletedAt"]] == []


async def test_a_card_changed_while_the_human_is_asked_is_not_deleted(apps_nextcloud: Nextcloud) -> None:
    """Deck's ETag changes once a second at most; a label added in the same second still counts."""
    with deck(apps_nextcloud) as api:
        board = api.board("Kitchen")
        todo = board["stack_ids"][0]
        card = api.card(board, todo, "Fix the tap")
        path = f"{API}/boards/{board['id']}/stacks/{todo}/cards/{card['id']}/assignLabel"
        label = api.call("GET", f"{API}/boards/{board['id']}")["labels"][0]["id"]

        async def on_the_phone() -> None:
            api.call("PUT", path, json={"labelId": label})

        human = Human(while_asked=on_the_phone)
        async with session(apps_nextcloud, human=human) as client:
            said = await refused(
                client, "nc_deck_delete_card", board_id=board["id"], stack_id=todo, card_id=card["id"]
            )
        assert "changed while you were being asked" in said
        assert api.stacks(board["id"])[todo] == [card["id"]]


async def test_without_deck_the_tools_say_so(apps_nextcloud: Nextcloud) -> None:
    assert apps_nextcloud.instance is not None
    apps_nextcloud.instance.occ("app:disable", "deck")  # back at the next test's reset
    # Nextcloud 34's PHP workers keep app settings cached up to 3 s (AppConfig's LOCAL_CACHE_TTL)
    with deck(apps_nextcloud) as api:
        deadline = time.monotonic() + 60
        while api.http.get(f"{API}/boards").status_code != 404:
            assert time.monotonic() < deadline, "Deck still answers a minute after occ disabled it"
    async with session(apps_nextcloud) as client:
        said = await refused(client, "nc_deck_list_boards")
    assert "Deck is not installed or not enabled for you on this Nextcloud" in said
