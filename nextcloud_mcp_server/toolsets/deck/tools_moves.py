"""Moving a Deck card: within its board (Deck's reorder), or to a stack of another board the
caller may edit. The other board may be read by people who cannot read the card now, so that move
asks first (ADR 0058's rule for what is published), bound to both boards and the card as read."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.auth.scopes import DECK_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.tools._audience import Audience, approve_publication
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.deck.client import DeckClient
from nextcloud_mcp_server.toolsets.deck.input import InvalidDeckInput
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard, DeckLabel
from nextcloud_mcp_server.toolsets.deck.tools_answers import CardDetail, card_detail
from nextcloud_mcp_server.toolsets.deck.tools_audience import move_audience
from nextcloud_mcp_server.toolsets.deck.tools_common import (
    DESCRIPTION_SHOWN,
    BoardId,
    CardId,
    StackId,
    locate,
    stack_title,
    toolset,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["nc_deck_move_card"]


def _title_key(label: DeckLabel) -> str:
    """How a card's label is matched with a label of another board: by its title, case aside."""
    return label.title.strip().casefold()


async def _move_across(
    deck: DeckClient, board_id: int, card: DeckCard, target: DeckBoard, stack: int
) -> DeckCard:
    """Deck's card update moves a card to the stack in its path, of any board, and gives it the
    target board's labels of the same titles; but Deck 1.13 then fails half-way (it removes the old
    labels after the move, which it refuses). So the labels are taken off first and put back from
    the target board's (created there when missing), as Deck 1.18 does itself. The card moved is
    Deck's answer to the update with the labels put on it (nothing is read back)."""
    for label in card.labels:
        await deck.set_label(board_id, card, label.id, on=False)
    try:
        moved = await deck.update_card(target.id, card, duedate=card.duedate, to_stack=stack)
    except NextcloudError:
        for label in card.labels:
            await deck.set_label(board_id, card, label.id, on=True)
        raise
    by_title = {_title_key(label): label for label in target.labels}
    moved = moved.model_copy(update={"stack_id": stack})
    labels: list[DeckLabel] = []
    for label in card.labels:
        found = by_title.get(_title_key(label))
        if found is None:
            found = await deck.create_label(target.id, label.title, label.color or "31CC7C")
            by_title[_title_key(label)] = found
        await deck.set_label(target.id, moved, found.id, on=True)
        if found.id not in {lb.id for lb in labels}:
            labels.append(found)
    return moved.model_copy(update={"labels": labels})


def _check_labels_can_follow(card: DeckCard, target: DeckBoard) -> None:
    """A label the target board lacks is created there, which only its managers may do. Checked
    before anything moves: the card went over, lost its labels, and the call said "refused"."""
    there = {_title_key(label) for label in target.labels}
    missing = [label.title for label in card.labels if _title_key(label) not in there]
    if missing and not target.can("manage"):
        names = ", ".join(f'"{title[:40]}"' for title in missing[:5])
        raise InvalidDeckInput(
            f'board "{target.title[:80]}" has no label {names}, and only its managers may add one: '
            "take the label off the card, or ask a manager of that board to add it. Nothing was moved."
        )


@toolset.tool(title="Move a Deck card", idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_move_card(
    board_id: BoardId,
    stack_id: StackId,
    card_id: CardId,
    to_stack_id: StackId,
    ctx: Context[Any, Any],
    position: Annotated[int, Field(ge=0, le=100_000, description="0 is the top of the stack")] = 0,
    to_board_id: Annotated[BoardId | None, Field(description="Another board; omit for this one")] = None,
) -> CardDetail:
    """Move a card to another stack or position, on its board or another (to_board_id). Moving it
    where more people read it asks first."""
    nc = await nextcloud_for(ctx)
    board, card = await locate(nc, board_id, stack_id, card_id)
    deck = nc.api(DeckClient)
    if to_board_id is None or to_board_id == board_id:
        stack_title(board, to_stack_id)
        moved = await deck.move_card(board_id, card, to_stack=to_stack_id, position=position)
        return card_detail(
            board_id, moved, [], DESCRIPTION_SHOWN, nc.api(DeckClient).web_url(board_id, moved.id)
        )
    target = await deck.board(to_board_id)
    stack_title(target, to_stack_id)
    _check_labels_can_follow(card, target)
    me = await nc.dav_user_id()

    async def again() -> Audience:
        _, now = await locate(nc, board_id, stack_id, card_id)
        return move_audience(await deck.board(board_id), await deck.board(to_board_id), now, me)

    await approve_publication(
        ctx,
        tool="nc_deck_move_card",
        audience=move_audience(board, target, card, me),
        text=f"{card.title}\n\n{card.description or ''}".strip(),
        action="Move this card",
        again=again,
    )
    across = await _move_across(deck, board_id, card, target, to_stack_id)
    moved = await deck.move_card(to_board_id, across, to_stack=to_stack_id, position=position)
    return card_detail(
        to_board_id, moved, [], DESCRIPTION_SHOWN, nc.api(DeckClient).web_url(to_board_id, moved.id)
    )
