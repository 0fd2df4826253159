"""What the Deck tools share: the toolset, the ids they take, where a card is (checked before
anything changes) and what an approval is bound to."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, Field

from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.deck.client import DeckClient
from nextcloud_mcp_server.toolsets.deck.input import InvalidDeckInput
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard
from nextcloud_mcp_server.toolsets.deck.tools_answers import cut

__all__ = [
    "DESCRIPTION_SHOWN",
    "MAX_CARDS_SHOWN",
    "MAX_STACKS_SHOWN",
    "BoardId",
    "CardId",
    "Names",
    "StackId",
    "locate",
    "now_iso",
    "stack_title",
    "toolset",
    "version_of",
]

toolset = Toolset("deck")

_ID = Field(ge=1, le=2**53)
BoardId = Annotated[int, _ID]
StackId = Annotated[int, _ID]
CardId = Annotated[int, _ID]
Names = Annotated[list[Annotated[str, Field(max_length=255)]], Field(max_length=20)]
MAX_CARDS_SHOWN = 500  # cards of one board in one answer, over all its stacks
MAX_STACKS_SHOWN = 50
DESCRIPTION_SHOWN = 8000


def version_of(*items: BaseModel) -> str:
    """What an approval is bound to: Deck's ETag changes once a second at most, so a digest of
    everything read is compared as well (a label added in the same second is a change)."""
    etag = str(getattr(items[0], "etag", ""))
    digest = hashlib.sha256("\n".join(item.model_dump_json() for item in items).encode()).hexdigest()
    return f"{etag}-{digest[:16]}"


def now_iso() -> str:
    """Now, as Deck stores a card's `done` (ISO 8601 with offset, seconds)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def stack_title(board: DeckBoard, stack_id: int) -> str:
    for stack in board.stacks:
        if stack.id == stack_id:
            return stack.title
    known = ", ".join(f"{s.id} ({cut(s.title, 40)})" for s in board.stacks[:30]) or "none"
    raise InvalidDeckInput(f"stack {stack_id} is not on board {board.id}; its stacks: {known}")


async def locate(
    nc: NextcloudClient, board_id: int, stack_id: int, card_id: int
) -> tuple[DeckBoard, DeckCard]:
    """The board and the card, checked to be where the caller says (nothing is changed otherwise:
    Deck itself reads only the card id, and would move the card to a stack named by mistake)."""
    board = await nc.api(DeckClient).board(board_id)
    stack_title(board, stack_id)
    card = await nc.api(DeckClient).card(board_id, stack_id, card_id)
    if card.stack_id != stack_id:
        raise InvalidDeckInput(f"card {card_id} is in stack {card.stack_id}, not in stack {stack_id}")
    if card.deleted_at:
        raise InvalidDeckInput(f"card {card_id} was deleted")
    return board, card
