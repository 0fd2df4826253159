"""Deck structure without a Nextcloud: who newly reads a card moved to another board, the titles
of boards, stacks and labels, and the order of a cross-board move (labels off, move, labels on;
put back when Deck refuses the move). The real flow is in test_deck.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.errors import Forbidden, InvalidInput
from nextcloud_mcp_server.toolsets.deck.input import check_names
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard, DeckLabel, DeckStack
from nextcloud_mcp_server.toolsets.deck.tools_audience import move_audience
from nextcloud_mcp_server.toolsets.deck.tools_moves import _move_across
from nextcloud_mcp_server.toolsets.deck.tools_removals import _carrying, _label


def _board(
    board_id: int, *users: str, groups: tuple[str, ...] = (), labels: tuple[str, ...] = ()
) -> DeckBoard:
    return DeckBoard.model_validate(
        {
            "id": board_id,
            "title": f"Board {board_id}",
            "owner": {"uid": "alice"},
            "users": [{"uid": u} for u in users],
            "acl": [{"participant": {"uid": g, "displayname": g}, "type": 1} for g in groups],
            "labels": [{"id": board_id * 100 + i, "title": t} for i, t in enumerate(labels)],
        }
    )


CARD = DeckCard.model_validate(
    {"id": 7, "title": "Teaser", "stackId": 1, "labels": [{"id": 100, "title": "Press", "color": "FF7A66"}]}
)


@pytest.mark.parametrize(
    ("target", "publishes", "described"),
    [
        (
            _board(2, "alice", "bob"),
            False,
            "1 person: bob",
        ),  # bob reads the source board already? no: one new reader
        (_board(2, "alice", "bob", "carol"), True, "2 people: bob, carol"),
        (_board(2, "alice", groups=("staff",)), True, "the members of the group staff"),
        (_board(2, "alice", "dave"), False, "nobody else"),  # dave reads the source too
    ],
)
def test_a_move_publishes_to_who_cannot_read_the_card_yet(
    target: DeckBoard, publishes: bool, described: str
) -> None:
    source = _board(1, "alice", "dave")
    audience = move_audience(source, target, CARD, "alice")
    assert audience.publishes is publishes
    assert audience.describe() == described
    assert audience.where == 'the board "Board 2" (from "Board 1")'


def test_the_move_is_bound_to_the_card_and_both_boards() -> None:
    source, target = _board(1, "alice"), _board(2, "alice", groups=("staff",))
    first = move_audience(source, target, CARD, "alice").fingerprint()
    changed = CARD.model_copy(update={"description": "now with the secret price"})
    assert move_audience(source, target, changed, "alice").fingerprint() != first
    assert move_audience(_board(1, "alice", "erin"), target, CARD, "alice").fingerprint() != first
    assert move_audience(source, target, CARD, "alice").fingerprint() == first


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (["Ideas", "ideas"], "given twice"),
        ([" "], "non-empty line"),
        (["a\nb"], "non-empty line"),
        (["x" * 101], "at most 100 characters"),
        (["Do\u200bne"], "U+200B"),
    ],
)
def test_titles_deck_would_refuse_or_mangle_are_refused(names: list[str], said: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(said)):
        check_names(names, "stack")


def test_titles_are_trimmed() -> None:
    assert check_names([" Ideas ", "Done"], "stack") == ["Ideas", "Done"]


class _Deck:
    """Records what a move asks of Deck; `refuse` makes the card update fail as Deck would."""

    def __init__(self, refuse: bool = False) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.refuse = refuse

    async def set_label(self, board_id: int, card: DeckCard, label_id: int, *, on: bool) -> None:
        self.calls.append(("label", board_id, card.stack_id, label_id, on))

    async def update_card(self, board_id: int, card: DeckCard, **fields: Any) -> DeckCard:
        self.calls.append(("update", board_id, fields["to_stack"]))
        if self.refuse:
            raise Forbidden("cloud.example.com", "Deck refused: permission denied", status=403)
        return card

    async def create_label(self, board_id: int, title: str, color: str) -> DeckLabel:
        self.calls.append(("create label", board_id, title, color))
        return DeckLabel(id=999, title=title, color=color)


async def test_labels_come_off_before_the_move_and_on_from_the_target_board() -> None:
    card = CARD.model_copy(
        update={"labels": [DeckLabel(id=100, title="Press", color="FF7A66"), DeckLabel(id=101, title="Web")]}
    )
    deck = _Deck()
    await _move_across(deck, 1, card, _board(2, "alice", labels=("press",)), 20)  # type: ignore[arg-type]
    assert deck.calls == [
        ("label", 1, 1, 100, False),
        ("label", 1, 1, 101, False),
        ("update", 2, 20),
        ("label", 2, 20, 200, True),  # the target's "press", matched without case
        ("create label", 2, "Web", "31CC7C"),
        ("label", 2, 20, 999, True),
    ]


async def test_a_refused_move_puts_the_labels_back() -> None:
    deck = _Deck(refuse=True)
    with pytest.raises(Forbidden):
        await _move_across(deck, 1, CARD, _board(2, "alice"), 20)  # type: ignore[arg-type]
    assert deck.calls == [("label", 1, 1, 100, False), ("update", 2, 20), ("label", 1, 1, 100, True)]


def test_a_label_is_named_by_one_title_and_its_cards_counted_archived_ones_too() -> None:
    board = _board(1, "alice", labels=("Later", "later ", "Press"))
    with pytest.raises(InvalidInput, match="names 2 labels of the board"):
        _label(board, "LATER")
    with pytest.raises(InvalidInput, match="names 0 labels.*'Press'"):
        _label(board, "Urgent")
    press = _label(board, " press ")
    live = DeckStack.model_validate(
        {"id": 1, "cards": [CARD.model_dump(by_alias=True), {"id": 8, "labels": None}]}
    )
    stored = DeckStack.model_validate(
        {"id": 1, "cards": [{"id": 9, "archived": True, "labels": [{"id": press.id, "title": "Press"}]}]}
    )
    assert [c.id for c in _carrying([live, stored], press.id)] == [9]
    assert [c.id for c in _carrying([live, stored], 100)] == [7]
