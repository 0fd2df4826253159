"""The deck toolset end to end: the SDK's client, the real server over streamable HTTP, and the real
Nextcloud 29 (Deck 1.13.10) and 34 (Deck 1.18.3). Boards are set up and every change is checked
through Deck's own API with alice's app password, never through our client."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.tools import all_tools
from tests.backends import Nextcloud
from tests.toolsets.deck.deck_api import API, Deck, call, deck, refused, session

pytestmark = pytest.mark.integration

DECK_TOOLS = {
    "nc_deck_list_boards": ("deck:read", True, False),
    "nc_deck_get_board": ("deck:read", True, False),
    "nc_deck_get_card": ("deck:read", True, False),
    "nc_deck_upcoming_cards": ("deck:read", True, False),
    "nc_deck_create_card": ("deck:write", False, False),
    "nc_deck_move_card": ("deck:write", False, False),
    "nc_deck_update_card": ("deck:write", False, False),
    "nc_deck_add_comment": ("deck:write", False, False),
    "nc_deck_delete_card": ("deck:write", False, True),
    "nc_deck_delete_board": ("deck:write", False, True),
    "nc_deck_create_board": ("deck:write", False, False),
    "nc_deck_update_board": ("deck:write", False, False),
    "nc_deck_delete_stack": ("deck:write", False, True),
    "nc_deck_delete_label": ("deck:write", False, True),
}


async def test_the_deck_tools_are_offered_when_chosen_with_scopes_and_annotations(
    apps_nextcloud: Nextcloud,
) -> None:
    async with session(apps_nextcloud) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(DECK_TOOLS)
    for name, (scope, read_only, destructive) in DECK_TOOLS.items():
        tool = tools[name]
        assert tool.meta is not None
        assert tool.meta["nextcloud-mcp/scopes"] == [scope]
        # and, for a tool that asks, the link to the approval view (ADR 0077)
        assert tool.meta == {spec.name: spec.meta for spec in all_tools()}[name]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is read_only
        assert tool.annotations.destructive_hint is destructive
        assert 0 < len(tool.description or "") < 200, name


async def test_list_create_move_label_assign_comment_and_upcoming(apps_nextcloud: Nextcloud) -> None:
    """The issue's path: list boards, create a card, move it, comment on it; each checked in Deck."""
    with deck(apps_nextcloud) as api:
        board = api.board("Launch")
        todo, doing, done = board["stack_ids"]
        first = api.card(board, doing, "Already in progress")
        async with session(apps_nextcloud) as client:
            boards = await call(client, "nc_deck_list_boards")
            assert {"id": board["id"], "title": "Launch", "owner": "alice", "archived": False} in boards[
                "boards"
            ]

            created = await call(
                client,
                "nc_deck_create_card",
                board_id=board["id"],
                stack_id=todo,
                title="Write the press release",
                description="Two paragraphs",
                due="2026-12-01T17:00:00+01:00",
            )
            card_id = created["id"]
            stored = api.get_card(board["id"], todo, card_id).json()
            assert (stored["title"], stored["description"], stored["stackId"]) == (
                "Write the press release",
                "Two paragraphs",
                todo,
            )
            assert stored["duedate"].startswith("2026-12-01T16:00:00")

            shown = await call(client, "nc_deck_get_board", board_id=board["id"])
            assert [s["title"] for s in shown["stacks"]] == ["To do", "Doing", "Done"]
            assert [c["title"] for c in shown["stacks"][0]["cards"]] == ["Write the press release"]
            assert "alice" in shown["members"]
            assert "Later" in shown["labels"]

            # to the top of "Doing", above the card already there
            moved = await call(
                client,
                "nc_deck_move_card",
                board_id=board["id"],
                stack_id=todo,
                card_id=card_id,
                to_stack_id=doing,
            )
            assert moved["stack_id"] == doing
            assert api.stacks(board["id"]) == {todo: [], doing: [card_id, first["id"]], done: []}
            cut = await call(client, "nc_deck_get_board", board_id=board["id"], cards_per_stack=1)
            assert [len(s["cards"]) for s in cut["stacks"]] == [0, 1, 0]
            assert cut["stacks"][1]["card_count"] == 2
            assert cut["notes"] == [f"stack {doing}: 1 of 2 cards shown"]

            changed = await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=doing,
                card_id=card_id,
                add_labels=["later"],
                assign=["alice"],
            )
            assert (changed["labels"], changed["assigned"]) == (["Later"], ["alice"])
            stored = api.get_card(board["id"], doing, card_id).json()
            assert [label["title"] for label in stored["labels"]] == ["Later"]
            assert [a["participant"]["uid"] for a in stored["assignedUsers"]] == ["alice"]

            comment = await call(client, "nc_deck_add_comment", card_id=card_id, message="Draft is in Files")
            assert comment["author"] == "alice"
            assert api.comments(card_id) == ["Draft is in Files"]
            detail = await call(
                client, "nc_deck_get_card", board_id=board["id"], stack_id=doing, card_id=card_id
            )
            assert [c["message"] for c in detail["comments"]] == ["Draft is in Files"]
            assert detail["description"] == "Two paragraphs"

            upcoming = await call(client, "nc_deck_upcoming_cards")
            assert [(c["id"], c["board"], c["stack_id"]) for c in upcoming["cards"]] == [
                (card_id, "Launch", doing)
            ]

            cleared = await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=doing,
                card_id=card_id,
                due="",
                remove_labels=["Later"],
                unassign=["alice"],
            )
            assert (cleared["due"], cleared["labels"], cleared["assigned"]) == (None, [], [])
            stored = api.get_card(board["id"], doing, card_id).json()
            assert (stored["duedate"], stored["labels"] or [], stored["assignedUsers"] or []) == (
                None,
                [],
                [],
            )

            # renamed, described, marked done and not done, as Deck's own API shows
            ids = {"board_id": board["id"], "stack_id": doing, "card_id": card_id}
            text = "Two paragraphs\n\nand a quote from the team"
            renamed = await call(
                client, "nc_deck_update_card", **ids, title="Publish the release", description=text, done=True
            )
            assert (renamed["title"], renamed["done"]) == ("Publish the release", True)
            stored = api.get_card(board["id"], doing, card_id).json()
            assert (stored["title"], stored["description"], stored["stackId"]) == (
                "Publish the release",
                text,
                doing,
            )
            assert stored["done"]
            await call(client, "nc_deck_update_card", **ids, done=False)
            assert api.get_card(board["id"], doing, card_id).json()["done"] is None
            # emptying the description asks; this client cannot be asked: refused, nothing changed
            said = await refused(client, "nc_deck_update_card", **ids, description="")
            assert f'Replace the description of card "Publish the release" ({len(text)} characters)' in said
            assert "this client cannot ask for it" in said
            assert api.get_card(board["id"], doing, card_id).json()["description"] == text


async def test_a_due_date_change_keeps_every_other_field(apps_nextcloud: Nextcloud) -> None:
    """Deck's card update replaces the whole card: what is not sent back is lost (`done`, and on
    Deck 1.18 the start date). The tool sends back everything as read."""
    with deck(apps_nextcloud) as api:
        board = api.board("Chores")
        todo = board["stack_ids"][0]
        card = api.card(board, todo, "Taxes", description="Receipts in the blue folder")
        path = f"{API}/boards/{board['id']}/stacks/{todo}/cards/{card['id']}"
        extra = {"startdate": "2026-11-20T08:00:00+00:00"} if apps_nextcloud.major >= 34 else {}
        before = {
            "title": "Taxes",
            "type": "plain",
            "owner": "alice",
            "description": "Receipts in the blue folder",
        }
        api.call("PUT", path, json={**before, "order": 0, "done": "2026-11-25T10:00:00+00:00", **extra})
        async with session(apps_nextcloud) as client:
            await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=todo,
                card_id=card["id"],
                due="2026-12-24T12:00:00Z",
            )
        stored = api.get_card(board["id"], todo, card["id"]).json()
    assert stored["duedate"].startswith("2026-12-24T12:00:00")
    assert (stored["title"], stored["description"], stored["stackId"]) == (
        before["title"],
        before["description"],
        todo,
    )
    assert stored["done"]
    assert stored["done"].startswith("2026-11-25T10:00:00")
    if extra:
        assert stored["startdate"].startswith("2026-11-20T08:00:00")


async def test_a_card_named_in_the_wrong_place_or_bad_input_changes_nothing(
    apps_nextcloud: Nextcloud,
) -> None:
    with deck(apps_nextcloud) as api:
        board, other = api.board("Home"), api.board("Work")
        todo, doing, _ = board["stack_ids"]
        card = api.card(board, todo, "Paint the door")
        admin_board = Deck.__new__(Deck)
        admin_board.http = apps_nextcloud.http(apps_nextcloud.admin)
        secret = admin_board.board("Admin only")
        admin_board.http.close()
        ids = {"board_id": board["id"], "card_id": card["id"]}
        async with session(apps_nextcloud) as client:
            # a stack the card is not in: Deck itself would move the card there on an update
            said = await refused(
                client, "nc_deck_update_card", **ids, stack_id=doing, due="2026-12-01T10:00:00Z"
            )
            assert f"card {card['id']} is in stack {todo}, not in stack {doing}" in said
            said = await refused(
                client, "nc_deck_move_card", **ids, stack_id=todo, to_stack_id=other["stack_ids"][0]
            )
            assert f"stack {other['stack_ids'][0]} is not on board {board['id']}" in said
            said = await refused(client, "nc_deck_update_card", **ids, stack_id=todo, due="2026-12-01")
            assert "offset" in said
            said = await refused(client, "nc_deck_update_card", **ids, stack_id=todo, add_labels=["Urgent"])
            assert "'Urgent' is not a label" in said
            assert "'Later'" in said
            said = await refused(client, "nc_deck_add_comment", card_id=card["id"], message="x" * 1001)
            assert "at most 1000 characters" in said
            said = await refused(client, "nc_deck_add_comment", card_id=999999, message="Hello")
            assert "card 999999 does not exist, or it is not shared with you" in said
            said = await refused(
                client, "nc_deck_create_card", board_id=board["id"], stack_id=todo, title=" "
            )
            assert "must not be empty" in said
            said = await refused(
                client, "nc_deck_create_card", board_id=board["id"], stack_id=todo, title="x" * 256
            )
            assert "at most 255 characters" in said
            said = await refused(client, "nc_deck_get_board", board_id=secret["id"])
            assert "permission denied" in said
        stored = api.get_card(board["id"], todo, card["id"]).json()
        assert (stored["stackId"], stored["duedate"], stored["labels"] or []) == (todo, None, [])
        assert api.comments(card["id"]) == []
        assert api.stacks(board["id"])[todo] == [card["id"]]
