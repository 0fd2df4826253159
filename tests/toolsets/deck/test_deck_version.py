"""What a Deck approval is bound to (toolsets/deck/tools_common.py `version_of`): Deck's ETag changes once a
second at most, so a change within the same second must still make another version."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets.deck.models import DeckAssignment, DeckCard, DeckLabel, DeckUser
from nextcloud_mcp_server.toolsets.deck.tools_common import version_of as _version


def test_a_change_in_the_same_second_is_another_version() -> None:
    card = DeckCard.model_validate({"id": 7, "title": "Fix the tap", "stackId": 3, "ETag": "5f3c"})
    assert _version(card) == _version(card.model_copy())
    assert _version(card).startswith("5f3c-")
    for changed in (
        card.model_copy(update={"labels": [DeckLabel(id=1, title="Later")]}),
        card.model_copy(update={"assigned_users": [DeckAssignment(participant=DeckUser(uid="bob"))]}),
        card.model_copy(update={"description": "also the sink"}),
        card.model_copy(update={"stack_id": 4}),
    ):
        assert changed.etag == card.etag
        assert _version(changed) != _version(card)
