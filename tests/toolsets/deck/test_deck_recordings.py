"""The Deck client against Deck's recorded answers (tests/toolsets/deck/record_deck.py): Deck 1.13.10 on
Nextcloud 29 and 1.18.3 on 34, replayed with http_mock so that everything above the wire runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import Forbidden
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.deck.client import DECK_MISSING, DeckAppMissing, DeckClient
from nextcloud_mcp_server.toolsets.deck.models import DeckCard
from tests import http_mock
from tests.recordings import Recording, load

BASE = "https://cloud.example.com"
API = f"{BASE}/index.php/apps/deck/api/v1.0"
OCS = f"{BASE}/ocs/v2.php/apps/deck/api/v1.0"
VERSIONS = pytest.mark.parametrize("version", ["29", "34"])


@pytest.fixture
async def deck() -> AsyncIterator[DeckClient]:
    http = NextcloudHTTP(BASE, max_retries=0)
    yield DeckClient(http, BasicCredential("admin", "pw"))
    await http.aclose()


def answer(recording: Recording) -> http_mock.Response:
    headers = {k: v for k, v in recording.headers.items() if k in ("content-type", "etag")}
    return http_mock.Response(recording.status, content=recording.body.encode(), headers=headers)


def card_path(recording: Recording) -> str:
    assert recording.path is not None
    return recording.path.split("?")[0]


@VERSIONS
@http_mock.mock
async def test_a_card_parses_with_its_etag(deck: DeckClient, version: str) -> None:
    got = load("deck_card_get", version)
    http_mock.get(f"{BASE}{card_path(got)}").mock(return_value=answer(got))
    board, stack, card_id = (int(p) for p in card_path(got).split("/")[-5::2])
    card = await deck.card(board, stack, card_id)
    assert (card.id, card.title, card.stack_id, card.owner.uid) == (card_id, "Press release", stack, "admin")
    assert card.duedate is not None
    assert card.duedate.startswith("2026-12-01T16:00:00")
    assert card.etag == got.json()["ETag"] == got.headers["etag"].strip('"')


@VERSIONS
@http_mock.mock
async def test_a_due_date_update_sends_every_field_back(deck: DeckClient, version: str) -> None:
    """Deck's PUT replaces the card: `done` (and 1.18's start date) must travel with it."""
    got, updated = load("deck_card_get", version), load("deck_card_update", version)
    route = http_mock.put(f"{BASE}{card_path(got)}").mock(return_value=answer(updated))
    from_deck = json.loads(got.body)
    from_deck.update(
        done="2026-11-25T10:00:00+00:00", description="Receipts", startdate="2026-11-20T08:00:00+00:00"
    )
    board = int(card_path(got).split("/")[-5])
    changed = await deck.update_card(board, DeckCard.model_validate(from_deck), duedate=None)
    sent = json.loads(route.calls.last.request.content)
    assert sent == {
        "title": "Press release",
        "type": "plain",
        "owner": "admin",
        "description": "Receipts",
        "order": from_deck["order"],
        "duedate": None,
        "done": "2026-11-25T10:00:00+00:00",
        "startdate": "2026-11-20T08:00:00+00:00",
    }
    assert changed.duedate is None


@VERSIONS
@http_mock.mock
async def test_a_missing_card_and_a_missing_app_are_said_plainly(deck: DeckClient, version: str) -> None:
    missing, disabled = load("deck_card_missing_403", version), load("deck_app_disabled_404", version)
    http_mock.get(f"{BASE}{card_path(missing)}").mock(return_value=answer(missing))
    http_mock.get(f"{API}/boards").mock(return_value=answer(disabled))
    board, stack, card_id = (int(p) for p in card_path(missing).split("/")[-5::2])
    with pytest.raises(Forbidden, match="does not exist, or it is not shared with you"):
        await deck.card(board, stack, card_id)
    with pytest.raises(DeckAppMissing) as raised:
        await deck.boards()
    assert raised.value.message == DECK_MISSING


@VERSIONS
@http_mock.mock
async def test_comments_and_upcoming_cards_parse(deck: DeckClient, version: str) -> None:
    comments, upcoming = load("deck_comments_list", version), load("deck_upcoming", version)
    card_id = int(card_path(comments).split("/")[-2])
    http_mock.get(f"{OCS}/cards/{card_id}/comments").mock(return_value=answer(comments))
    http_mock.get(f"{OCS}/overview/upcoming").mock(return_value=answer(upcoming))
    found = await deck.comments(card_id, limit=10, offset=0)
    assert [(c.message, c.actor_id) for c in found] == [("Draft is in Files", "admin")]
    # the card's due date was cleared: 1.13 lists nothing, 1.18 lists it under `nodue`, left out
    raw = upcoming.json()["ocs"]["data"]
    assert raw == [] if version == "29" else list(raw) == ["nodue"]
    assert {group: cards for group, cards in (await deck.upcoming()).items() if cards} == {}
