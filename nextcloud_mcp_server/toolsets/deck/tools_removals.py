"""A board's stacks and labels deleted (docs/ADR/0087). Both ask the human first, bound to what
was read: the board (its ETag and content), the stack with its cards, archived ones included, or
the label with every card that carries it. Only a board's owner or managers may do either."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import DECK_WRITE, require_scopes
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._shown import shown_text
from nextcloud_mcp_server.toolsets.deck.client import DeckClient
from nextcloud_mcp_server.toolsets.deck.input import InvalidDeckInput
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard, DeckLabel, DeckStack
from nextcloud_mcp_server.toolsets.deck.tools_answers import cut
from nextcloud_mcp_server.toolsets.deck.tools_common import BoardId, StackId, stack_title, toolset, version_of
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["DeletedPart", "nc_deck_delete_label", "nc_deck_delete_stack"]


class DeletedPart(BaseModel):
    id: int
    title: str
    board_id: int
    cards: int = Field(description="Cards it held (stack) or carried it (label), archived ones too")
    deleted: bool = True


async def _read(deck: DeckClient, board_id: int) -> tuple[DeckBoard, list[DeckStack], list[DeckStack]]:
    """The board, its stacks with their cards, and with their archived cards; refused unless the
    caller may manage the board."""
    board = await deck.board(board_id)
    if board.deleted_at:
        raise InvalidDeckInput(f"board {board_id} was deleted")
    if not board.can("manage"):
        raise InvalidDeckInput(
            f"only the owner or a manager of board {board_id} can delete its stacks and labels"
        )
    return board, await deck.stacks(board_id), await deck.archived_stacks(board_id)


def _cards_of(stacks: list[DeckStack], stack_id: int) -> list[DeckCard]:
    return [card for stack in stacks if stack.id == stack_id for card in stack.cards]


def _carrying(stacks: list[DeckStack], label_id: int) -> list[DeckCard]:
    return [card for stack in stacks for card in stack.cards if any(lb.id == label_id for lb in card.labels)]


def _label(board: DeckBoard, title: str) -> DeckLabel:
    matches = [lb for lb in board.labels if lb.title.strip().casefold() == title.strip().casefold()]
    if len(matches) != 1:
        known = ", ".join(repr(lb.title[:40]) for lb in board.labels[:30]) or "none"
        raise InvalidDeckInput(
            f"{title[:60]!r} names {len(matches)} labels of the board; its labels: {known}"
        )
    return matches[0]


@toolset.tool(title="Delete a Deck stack", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_delete_stack(board_id: BoardId, stack_id: StackId, ctx: Context[Any, Any]) -> DeletedPart:
    """Delete a stack (list) of a board with all its cards, archived ones too. The user is asked
    to approve first."""
    deck = (await nextcloud_for(ctx)).api(DeckClient)
    board, stacks, archived = await _read(deck, board_id)
    title = stack_title(board, stack_id)
    cards, stored = _cards_of(stacks, stack_id), _cards_of(archived, stack_id)
    target = f"the stack {shown_text(cut(title, 100))} of the board {shown_text(cut(board.title, 100))}"
    kept = f" ({len(stored)} of them archived)" if stored else ""
    question = f"Delete {target} with its {len(cards) + len(stored)} cards{kept}?"
    tool = "nc_deck_delete_stack"

    def version(b: DeckBoard, live: list[DeckStack], old: list[DeckStack]) -> str:
        return version_of(b, *[s for s in live + old if s.id == stack_id])

    bound = version(board, stacks, archived)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=bound)
    if asked and version(*await _read(deck, board_id)) != bound:
        await refuse_changed(ctx, tool=tool, target=target)
    await deck.delete_stack(board_id, stack_id)
    return DeletedPart(id=stack_id, title=cut(title), board_id=board_id, cards=len(cards) + len(stored))


@toolset.tool(title="Delete a Deck label", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_delete_label(
    board_id: BoardId,
    label: Annotated[str, Field(min_length=1, max_length=255, description="The label's title on the board")],
    ctx: Context[Any, Any],
) -> DeletedPart:
    """Delete a label of a board; it comes off every card that carries it. The user is asked to
    approve first."""
    deck = (await nextcloud_for(ctx)).api(DeckClient)
    board, stacks, archived = await _read(deck, board_id)
    found = _label(board, label)
    carrying = _carrying(stacks + archived, found.id)
    target = f"the label {shown_text(cut(found.title, 100))} of the board {shown_text(cut(board.title, 100))}"
    question = f"Delete {target}? It comes off the {len(carrying)} cards that carry it."
    tool = "nc_deck_delete_label"

    def version(b: DeckBoard, live: list[DeckStack], old: list[DeckStack]) -> str:
        return version_of(b, *_carrying(live + old, found.id))

    bound = version(board, stacks, archived)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=bound)
    if asked and version(*await _read(deck, board_id)) != bound:
        await refuse_changed(ctx, tool=tool, target=target)
    await deck.delete_label(board_id, found.id)
    return DeletedPart(id=found.id, title=cut(found.title), board_id=board_id, cards=len(carrying))
