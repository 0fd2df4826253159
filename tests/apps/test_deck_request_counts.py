"""Deck tools make only the requests their answer needs (issue 43; `make bench-apps` measures them
on the real Deck). Each test declares exactly the requests allowed: any other request has no route
and fails the test, and the routes count what was asked. Answers are shaped as Deck 1.13.10
(Nextcloud 29) and 1.18.3 (Nextcloud 34) give them: the card update of 1.13 has no assigned users,
a reorder answers the stack's cards without labels or users and with the owner as a plain id, and
Deck 1.13's reorder leaves the moved card where it was among the others."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.deck import tools as deck_tools
from nextcloud_mcp_server.toolsets.deck import tools_boards as deck_boards
from nextcloud_mcp_server.toolsets.deck import tools_moves as deck_moves
from tests import http_mock

BASE = "https://cloud.example.com"
API = f"{BASE}/index.php/apps/deck/api/v1.0"
ALICE = BasicCredential("alice", "pw")
OWNER = {"primaryKey": "alice", "uid": "alice", "displayname": "Alice", "type": 0}
LABELS = [{"id": 1, "title": "Finished", "color": "31CC7C"}, {"id": 2, "title": "Later", "color": "317CCC"}]
CALLS: dict[str, Any] = {"ctx": None}  # the tools are called as functions; no human is asked here


@pytest.fixture
async def nextcloud(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    http = NextcloudHTTP(BASE, max_retries=0)

    async def nextcloud_for(ctx: Any) -> NextcloudClient:
        return NextcloudClient(http, ALICE)

    for module in (deck_tools, deck_boards, deck_moves):
        monkeypatch.setattr(module, "nextcloud_for", nextcloud_for)
    yield
    await http.aclose()


def _board(board_id: int, stacks: list[tuple[int, str]], title: str = "Trip") -> dict[str, Any]:
    return {
        "id": board_id,
        "title": title,
        "color": "0082c9",
        "archived": False,
        "owner": OWNER,
        "labels": [{**label, "boardId": board_id} for label in LABELS],
        "users": [OWNER],
        "acl": [],
        "permissions": {f"PERMISSION_{p}": True for p in ("READ", "EDIT", "MANAGE", "SHARE")},
        "stacks": [{"id": i, "title": t, "boardId": board_id, "order": n} for n, (i, t) in enumerate(stacks)],
        "deletedAt": 0,
        "ETag": f"board{board_id}",
    }


def _card(stack_id: int = 10, order: int = 999, **fields: Any) -> dict[str, Any]:
    return {
        "id": 7,
        "title": "Tickets",
        "description": "Book them",
        "stackId": stack_id,
        "type": "plain",
        "order": order,
        "archived": False,
        "done": None,
        "duedate": None,
        "labels": [{"id": 2, "title": "Later", "color": "317CCC", "cardId": 7}],
        "assignedUsers": [{"id": 1, "participant": OWNER, "cardId": 7, "type": 0}],
        "owner": OWNER,
        "deletedAt": 0,
        "ETag": "card-read",
        **fields,
    }


def _json(route: http_mock.Route) -> Any:
    return json.loads(route.calls.last.request.content)


@http_mock.mock
@pytest.mark.parametrize("deck", ["1.13", "1.18"])
async def test_a_card_update_is_answered_by_deck_s_answer_to_it(nextcloud: None, deck: str) -> None:
    """Title and done: the board, the card, the PUT (it answers the card); the card was read back
    (one request more). Deck 1.13 answers the PUT without the assigned users, which it keeps."""
    board = http_mock.get(f"{API}/boards/5").respond(json=_board(5, [(10, "To do")]))
    read = http_mock.get(f"{API}/boards/5/stacks/10/cards/7").respond(json=_card())
    users = None if deck == "1.13" else _card()["assignedUsers"]
    answer = _card(title="Buy tickets", done="2026-11-28T16:00:00+00:00", assignedUsers=users, ETag="new")
    put = http_mock.put(f"{API}/boards/5/stacks/10/cards/7").respond(json=answer)
    card = await deck_tools.nc_deck_update_card(5, 10, 7, title="Buy tickets", done=True, **CALLS)
    assert (card.title, card.done, card.etag) == ("Buy tickets", True, "new")
    assert (card.labels, card.assigned) == (["Later"], ["alice"])
    assert _json(put)["title"] == "Buy tickets"
    assert (board.call_count, read.call_count, put.call_count) == (1, 1, 1)


@http_mock.mock
async def test_a_card_whose_labels_change_is_read_back(nextcloud: None) -> None:
    """A label's answer does not carry the card: then, and only then, the card is read again."""
    http_mock.get(f"{API}/boards/5").respond(json=_board(5, [(10, "To do")]))
    both = [{"id": 1, "title": "Finished", "color": "31CC7C"}, *_card()["labels"]]
    read = http_mock.get(f"{API}/boards/5/stacks/10/cards/7").mock(
        side_effect=[http_mock.Response(200, json=_card()), http_mock.Response(200, json=_card(labels=both))]
    )
    label = http_mock.put(f"{API}/boards/5/stacks/10/cards/7/assignLabel").respond(json={})
    card = await deck_tools.nc_deck_update_card(5, 10, 7, add_labels=["finished"], **CALLS)
    assert card.labels == ["Finished", "Later"]
    assert _json(label) == {"labelId": 1}
    assert (read.call_count, label.call_count) == (2, 1)


@http_mock.mock
async def test_a_board_rename_is_answered_without_reading_the_board_again(nextcloud: None) -> None:
    """The board (its PUT takes every field; it lists its stacks and labels) and the PUT; the board
    and its stacks were read back (two requests more)."""
    read = http_mock.get(f"{API}/boards/5").respond(json=_board(5, [(11, "Done"), (10, "To do")]))
    renamed = {k: v for k, v in _board(5, [], "Trip 2026").items() if k not in ("labels", "stacks")}
    put = http_mock.put(f"{API}/boards/5").respond(json=renamed)
    stack = http_mock.put(f"{API}/boards/5/stacks/10").respond(json={})
    made = http_mock.post(f"{API}/boards/5/stacks").respond(
        json={"id": 12, "title": "Booked", "boardId": 5, "order": 2}
    )
    board = await deck_boards.nc_deck_update_board(
        5, title="Trip 2026", rename_stacks={"to do": "Next"}, add_stacks=["Booked"], **CALLS
    )
    assert (board.title, board.archived, board.labels) == ("Trip 2026", False, ["Finished", "Later"])
    assert [(s.id, s.title) for s in board.stacks] == [(11, "Done"), (10, "Next"), (12, "Booked")]
    assert _json(put) == {"title": "Trip 2026", "color": "0082c9", "archived": False}
    assert (read.call_count, put.call_count, stack.call_count, made.call_count) == (1, 1, 1, 1)


@http_mock.mock
@pytest.mark.parametrize(
    ("reordered", "fixed"),
    [
        pytest.param([(7, 0), (4, 1)], False, id="1.18: placed"),
        pytest.param([(4, 1), (7, 2)], True, id="1.13: left below the free place"),
        pytest.param([(7, 1)], False, id="1.13: alone in the stack, at the top"),
    ],
)
async def test_a_move_on_its_board_is_answered_by_the_reorder(
    nextcloud: None, reordered: list[tuple[int, int]], fixed: bool
) -> None:
    """The board, the card, the reorder (it answers where the card is now); the card was read back
    (one request more). Deck 1.13 leaves the card at its rank among the others: one card update
    puts it in the free place when that rank is not the one asked."""
    board = http_mock.get(f"{API}/boards/5").respond(json=_board(5, [(10, "To do"), (11, "Done")]))
    read = http_mock.get(f"{API}/boards/5/stacks/10/cards/7").respond(json=_card())
    bare: dict[str, Any] = {"labels": None, "assignedUsers": None, "owner": "alice", "ETag": "card-moved"}
    reorder = http_mock.put(f"{API}/boards/5/stacks/11/cards/7/reorder").respond(
        json=[_card(11, order, **{**bare, "id": i}) for i, order in reordered]
    )
    put = http_mock.put(f"{API}/boards/5/stacks/11/cards/7").respond(
        json=_card(11, 0, assignedUsers=None, ETag="card-placed")
    )
    card = await deck_moves.nc_deck_move_card(5, 10, 7, 11, **CALLS, position=0)
    assert (card.stack_id, card.labels, card.assigned) == (11, ["Later"], ["alice"])
    assert card.etag == ("card-placed" if fixed else "card-moved")
    assert _json(reorder) == {"stackId": 11, "order": 0}
    assert (board.call_count, read.call_count, reorder.call_count, put.call_count) == (1, 1, 1, int(fixed))
    if fixed:
        assert (_json(put)["order"], _json(put)["title"]) == (0, "Tickets")


@http_mock.mock
async def test_a_move_to_another_board_is_answered_by_its_update_and_reorder(nextcloud: None) -> None:
    """Both boards, the card, its label off, the PUT to the other board, the label on there, the
    reorder; the card was read back (one request more). Its label is the other board's."""
    http_mock.get(f"{BASE}/ocs/v2.php/cloud/user").respond(
        json={"ocs": {"meta": {"status": "ok", "statuscode": 200}, "data": {"id": "alice"}}}
    )
    source = http_mock.get(f"{API}/boards/5").respond(json=_board(5, [(10, "To do")]))
    target = http_mock.get(f"{API}/boards/6").respond(json=_board(6, [(20, "Inbox")], "Quiet"))
    read = http_mock.get(f"{API}/boards/5/stacks/10/cards/7").respond(json=_card())
    off = http_mock.put(f"{API}/boards/5/stacks/10/cards/7/removeLabel").respond(json={})
    put = http_mock.put(f"{API}/boards/6/stacks/20/cards/7").respond(json=_card(20, 999, labels=[]))
    on = http_mock.put(f"{API}/boards/6/stacks/20/cards/7/assignLabel").respond(json={})
    reorder = http_mock.put(f"{API}/boards/6/stacks/20/cards/7/reorder").respond(
        json=[_card(20, 0, labels=None, assignedUsers=None, owner="alice")]
    )
    card = await deck_moves.nc_deck_move_card(5, 10, 7, 20, **CALLS, to_board_id=6)
    assert (card.board_id, card.stack_id, card.labels, card.assigned) == (6, 20, ["Later"], ["alice"])
    assert (_json(off), _json(on)) == ({"labelId": 2}, {"labelId": 2})
    counts = [r.call_count for r in (source, target, read, off, put, on, reorder)]
    assert counts == [1, 1, 1, 1, 1, 1, 1]
