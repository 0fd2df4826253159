"""A Deck board built and changed through this server end to end on the real Nextcloud 29 and 34:
stacks, labels, a card archived and moved to another board, each checked through Deck's own API."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human
from tests.toolsets.deck.deck_api import API, call, deck, refused, session

pytestmark = pytest.mark.integration


async def test_a_board_with_stacks_and_labels_and_a_card_archived_and_moved_across_boards(
    apps_nextcloud: Nextcloud,
) -> None:
    """The issue's structure: a board created with its stacks and labels, renamed and grown; a card
    given a new label, archived and restored, then moved to another board: to one only its owner
    reads without a question, to one shared with a group after the human approves (a decline
    moves nothing). Every step is checked through Deck's own API."""
    with deck(apps_nextcloud) as api:
        human = Human(approve=False)
        async with session(apps_nextcloud, human=human) as client:
            made = await call(
                client, "nc_deck_create_board", title="Launch", stacks=["Ideas", "Doing"], labels=["Press"]
            )
            board_id = made["id"]
            assert made["url"] == f"{apps_nextcloud.url}/index.php/apps/deck/board/{board_id}"
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert stored["title"] == "Launch"
            assert "Press" in [label["title"] for label in stored["labels"]]
            assert [
                s["title"]
                for s in sorted(api.call("GET", f"{API}/boards/{board_id}/stacks"), key=lambda s: s["order"])
            ] == [
                "Ideas",
                "Doing",
            ]
            grown = await call(
                client,
                "nc_deck_update_board",
                board_id=board_id,
                title="Launch 2027",
                add_stacks=["Done"],
                add_labels=["press", "Web"],
            )
            assert grown["notes"] == ["the label 'press' was already on the board"]
            assert [s["title"] for s in grown["stacks"]] == ["Ideas", "Doing", "Done"]
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert (stored["title"], stored["archived"]) == ("Launch 2027", False)
            assert [label["title"] for label in stored["labels"]].count("Press") == 1
            assert "Web" in [label["title"] for label in stored["labels"]]
            ideas = grown["stacks"][0]["id"]

            card = await call(
                client, "nc_deck_create_card", board_id=board_id, stack_id=ideas, title="Teaser"
            )
            ids = {"board_id": board_id, "stack_id": ideas, "card_id": card["id"]}
            assert (
                card["url"] == f"{apps_nextcloud.url}/index.php/apps/deck/board/{board_id}/card/{card['id']}"
            )
            with apps_nextcloud.http(apps_nextcloud.alice) as page:  # Deck's own route for that page
                assert page.get(card["url"], headers={"Accept": "text/html"}).status_code == 200
            await call(client, "nc_deck_update_card", **ids, add_labels=["Press"])
            await call(client, "nc_deck_update_card", **ids, archived=True)
            stored = api.get_card(board_id, ideas, card["id"]).json()
            assert stored["archived"] is True
            assert [label["title"] for label in stored["labels"]] == ["Press"]
            assert api.stacks(board_id)[ideas] == []  # archived cards leave the board's listing
            await call(client, "nc_deck_update_card", **ids, archived=False)
            assert api.get_card(board_id, ideas, card["id"]).json()["archived"] is False

            # to a board only alice reads: moved at once, to the top, its label carried over by title
            quiet = api.board("Private", stacks=("Inbox",))
            inbox = quiet["stack_ids"][0]
            api.card(quiet, inbox, "Already here")
            moved = await call(client, "nc_deck_move_card", **ids, to_board_id=quiet["id"], to_stack_id=inbox)
            assert (moved["board_id"], moved["stack_id"]) == (quiet["id"], inbox)
            assert api.stacks(quiet["id"])[inbox][0] == card["id"]
            assert api.stacks(board_id)[ideas] == []
            stored = api.get_card(quiet["id"], inbox, card["id"]).json()
            assert [(label["title"], label["boardId"]) for label in stored["labels"]] == [
                ("Press", quiet["id"])
            ]
            assert human.questions == []

            # to a board shared with a group: asked; declined, nothing moved
            shared = api.board("Team", stacks=("Backlog",))
            api.call(
                "POST",
                f"{API}/boards/{shared['id']}/acl",
                json={
                    "type": 1,
                    "participant": "admin",
                    "permissionEdit": True,
                    "permissionShare": False,
                    "permissionManage": False,
                },
            )
            backlog = shared["stack_ids"][0]
            there = {"board_id": quiet["id"], "stack_id": inbox, "card_id": card["id"]}
            said = await refused(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert "Nothing was changed" in said
            assert human.questions == [
                'Move this card in your name in the board "Team" (from "Private"), read by 1 person: '
                'admin; and the members of the group admin?\n\n"Teaser"'
            ]
            assert api.stacks(shared["id"])[backlog] == []
            human.approve = True

            async def rewritten() -> None:  # what was shown changes while the person is asked
                body = {"title": "Teaser", "type": "plain", "owner": "alice", "description": "price: 9 EUR"}
                api.call("PUT", f"{API}/boards/{quiet['id']}/stacks/{inbox}/cards/{card['id']}", json=body)

            human.while_asked = rewritten
            said = await refused(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert "changed while you were being asked" in said
            assert api.stacks(shared["id"])[backlog] == []
            human.while_asked = None
            moved = await call(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert api.stacks(shared["id"])[backlog] == [card["id"]]
            assert api.get_card(shared["id"], backlog, card["id"]).json()["stackId"] == backlog

            renamed = await call(
                client,
                "nc_deck_update_board",
                board_id=board_id,
                rename_stacks={"ideas": "Backlog"},
                rename_labels={"Web": "Website"},
                add_labels=["Web"],
            )
            assert [s["title"] for s in renamed["stacks"]] == ["Backlog", "Doing", "Done"]
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert {"Website", "Web"} <= {label["title"] for label in stored["labels"]}
            assert sorted(s["order"] for s in stored["stacks"]) == [0, 1, 2]  # kept their places
            said = await refused(
                client, "nc_deck_update_board", board_id=board_id, rename_labels={"Web": "press"}
            )
            assert "the board has a label 'press' already" in said
            archived = await call(client, "nc_deck_update_board", board_id=board_id, archived=True)
            assert archived["archived"] is True
            assert api.call("GET", f"{API}/boards/{board_id}")["archived"] is True
            said = await refused(client, "nc_deck_update_board", board_id=board_id, add_stacks=["Later"])
            assert "is archived; restore it (archived=false)" in said
