"""Deck toolset: boards, stacks and cards of the Nextcloud Deck app (ADR 0043). A card is named by
its board, its stack and its own id, as nc_deck_get_board lists them; comments need only the
card id. Deleting a card or a board asks the human first, and so does moving a card to a board
more people read, or deleting a stack or a label (`tools_removals.py`). Boards are created and
changed in `tools_boards.py`, cards moved in `tools_moves.py`."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from nextcloud_mcp_server.auth.scopes import DECK_READ, DECK_WRITE, require_scopes
from nextcloud_mcp_server.tools._approval import approve_removal, refuse_changed, require_approval, shrinks
from nextcloud_mcp_server.tools._audience import approve_publication
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.deck import tools_boards, tools_moves, tools_removals
from nextcloud_mcp_server.toolsets.deck.client import UPCOMING_GROUPS, DeckClient
from nextcloud_mcp_server.toolsets.deck.input import (
    MAX_COMMENT,
    MAX_DESCRIPTION,
    InvalidDeckInput,
    check_card_title,
    check_comment,
    check_description,
    check_due,
    check_user_id,
    resolve_labels,
)
from nextcloud_mcp_server.toolsets.deck.tools_answers import (
    BoardDetail,
    BoardList,
    CardDetail,
    Comment,
    DeletedItem,
    StackView,
    UpcomingCards,
    board_summary,
    card_detail,
    card_summary,
    comment_view,
    cut,
    upcoming_card,
)
from nextcloud_mcp_server.toolsets.deck.tools_audience import card_audience
from nextcloud_mcp_server.toolsets.deck.tools_common import (
    DESCRIPTION_SHOWN,
    MAX_CARDS_SHOWN,
    MAX_STACKS_SHOWN,
    BoardId,
    CardId,
    Names,
    StackId,
    locate,
    now_iso,
    stack_title,
    toolset,
    version_of,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["tools_boards", "tools_moves", "tools_removals", "toolset"]


@toolset.tool(title="List Deck boards", read_only=True)
@require_scopes(DECK_READ)
async def nc_deck_list_boards(
    ctx: Context[Any, Any],
    include_archived: bool = False,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> BoardList:
    """List the Deck boards you can see (id, title, owner); nc_deck_get_board shows one."""
    nc = await nextcloud_for(ctx)
    boards = [
        b
        for b in await nc.api(DeckClient).boards()
        if not b.deleted_at and (include_archived or not b.archived)
    ]
    boards.sort(key=lambda b: (b.title.casefold(), b.id))
    return BoardList(boards=[board_summary(b) for b in boards[offset : offset + limit]], total=len(boards))


@toolset.tool(title="Show a Deck board", read_only=True)
@require_scopes(DECK_READ)
async def nc_deck_get_board(
    board_id: BoardId,
    ctx: Context[Any, Any],
    cards_per_stack: Annotated[int, Field(ge=0, le=200)] = 50,
) -> BoardDetail:
    """A board's stacks with their cards (titles, due dates, labels, assignees), its labels and
    members. Archived cards are not listed."""
    nc = await nextcloud_for(ctx)
    board = await nc.api(DeckClient).board(board_id)
    stacks = await nc.api(DeckClient).stacks(board_id)
    notes: list[str] = []
    if len(stacks) > MAX_STACKS_SHOWN:
        notes.append(f"the board has {len(stacks)} stacks; the first {MAX_STACKS_SHOWN} are shown")
    budget = MAX_CARDS_SHOWN
    views = []
    for stack in stacks[:MAX_STACKS_SHOWN]:
        cards = sorted(stack.cards, key=lambda c: (c.order, c.id))
        shown = cards[: min(cards_per_stack, budget)]
        budget -= len(shown)
        if len(shown) < len(cards):
            notes.append(f"stack {stack.id}: {len(shown)} of {len(cards)} cards shown")
        views.append(
            StackView(
                id=stack.id,
                title=cut(stack.title),
                cards=[card_summary(c) for c in shown],
                card_count=len(cards),
            )
        )
    return BoardDetail(
        id=board.id,
        title=cut(board.title),
        url=nc.api(DeckClient).web_url(board.id),
        owner=board.owner.uid,
        labels=[cut(label.title, 100) for label in board.labels[:100]],
        members=sorted({u.uid for u in [board.owner, *board.users[:200]] if u.uid}),
        stacks=views,
        notes=notes,
    )


@toolset.tool(title="Show a Deck card", read_only=True)
@require_scopes(DECK_READ)
async def nc_deck_get_card(
    board_id: BoardId,
    stack_id: StackId,
    card_id: CardId,
    ctx: Context[Any, Any],
    comments: Annotated[int, Field(ge=0, le=100, description="How many of the newest comments")] = 10,
) -> CardDetail:
    """One card with its description, due date, labels, assignees and newest comments."""
    nc = await nextcloud_for(ctx)
    _, card = await locate(nc, board_id, stack_id, card_id)
    found = await nc.api(DeckClient).comments(card_id, limit=comments, offset=0) if comments else []
    return card_detail(
        board_id, card, found[:comments], DESCRIPTION_SHOWN, nc.api(DeckClient).web_url(board_id, card.id)
    )


@toolset.tool(title="Create a Deck card")
@require_scopes(DECK_WRITE)
async def nc_deck_create_card(
    board_id: BoardId,
    stack_id: StackId,
    title: Annotated[str, Field(max_length=1000)],
    ctx: Context[Any, Any],
    description: Annotated[str, Field(description="Markdown")] = "",
    due: Annotated[
        str | None, Field(description="ISO 8601 with offset, e.g. 2026-12-01T17:00:00+01:00")
    ] = None,
) -> CardDetail:
    """Create a card at the bottom of a stack, with an optional description and due date."""
    title, description = check_card_title(title), check_description(description)
    duedate = check_due(due) if due else None
    nc = await nextcloud_for(ctx)
    board = await nc.api(DeckClient).board(board_id)
    stack_title(board, stack_id)
    card = await nc.api(DeckClient).create_card(
        board_id, stack_id, title=title, description=description, duedate=duedate
    )
    return card_detail(board_id, card, [], DESCRIPTION_SHOWN, nc.api(DeckClient).web_url(board_id, card.id))


@toolset.tool(title="Change a Deck card", idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_update_card(
    board_id: BoardId,
    stack_id: StackId,
    card_id: CardId,
    ctx: Context[Any, Any],
    due: Annotated[
        str | None, Field(description="ISO 8601 with offset; '' clears the due date; omit to keep it")
    ] = None,
    add_labels: Annotated[Names, Field(description="Label titles of the board")] = [],  # noqa: B006
    remove_labels: Names = [],  # noqa: B006
    assign: Annotated[Names, Field(description="User ids of board members")] = [],  # noqa: B006
    unassign: Names = [],  # noqa: B006
    title: Annotated[str | None, Field(max_length=1000, description="A new title")] = None,
    description: Annotated[
        str | None, Field(max_length=MAX_DESCRIPTION, description="The new Markdown description, whole")
    ] = None,
    done: Annotated[bool | None, Field(description="Mark done, or not done")] = None,
    archived: Annotated[bool | None, Field(description="Archive, or restore from the archive")] = None,
) -> CardDetail:
    """Rename, describe, mark done, archive or restore a card; set or clear its due date; add or
    remove labels and users. Cutting the description below half asks first."""
    duedate = check_due(due) if due else None
    new_title = check_card_title(title) if title is not None else None
    new_text = check_description(description) if description is not None else None
    assigned, unassigned = [check_user_id(u) for u in assign], [check_user_id(u) for u in unassign]
    fields = (add_labels, remove_labels, assigned, unassigned)
    if (due, title, description, done, archived) == (None,) * 5 and not any(fields):
        raise InvalidDeckInput(
            "give at least one of title, description, done, archived, due, add_labels, remove_labels, "
            "assign or unassign"
        )
    if set(assigned) & set(unassigned) or {n.casefold() for n in add_labels} & {
        n.casefold() for n in remove_labels
    }:
        raise InvalidDeckInput("the same user or label is both added and removed")
    nc = await nextcloud_for(ctx)
    board, card = await locate(nc, board_id, stack_id, card_id)
    adding, removing = resolve_labels(board, add_labels), resolve_labels(board, remove_labels)
    has_label = {label.id for label in card.labels}
    has_user = {a.participant.uid for a in card.assigned_users}
    if new_text is not None and shrinks(card.description, new_text):
        target = f'card "{cut(card.title)}"'
        question = (
            f"Replace the description of {target} ({len(card.description or '')} characters) "
            f"with {len(new_text)} characters?"
        )
        tool, version = "nc_deck_update_card", version_of(card)
        asked = await approve_removal(ctx, tool=tool, target=target, question=question, version=version)
        if asked:
            card = await nc.api(DeckClient).card(board_id, stack_id, card_id)
            if version_of(card) != version:
                await refuse_changed(ctx, tool=tool, target=target)
    done_at: str | bool | None = False  # False: as it is
    if done is not None and bool(card.done) != done:
        done_at = now_iso() if done else None
    archive = archived if archived is not None and archived != card.archived else None
    keeps_due = due is None
    if (
        (not keeps_due and duedate != card.duedate)
        or new_title
        or new_text is not None
        or done_at is not False
        or archive is not None
    ):
        card = await nc.api(DeckClient).update_card(
            board_id,
            card,
            duedate=card.duedate if keeps_due else duedate,
            title=new_title,
            description=new_text,
            done=done_at,
            archived=archive,
        )
    labels_on = [label for label in adding if label.id not in has_label]
    labels_off = [label for label in removing if label.id in has_label]
    users_on = [user for user in assigned if user not in has_user]
    users_off = [user for user in unassigned if user in has_user]
    for label in labels_on:
        await nc.api(DeckClient).set_label(board_id, card, label.id, on=True)
    for label in labels_off:
        await nc.api(DeckClient).set_label(board_id, card, label.id, on=False)
    for user in users_on:
        await nc.api(DeckClient).set_user(board_id, card, user, assigned=True)
    for user in users_off:
        await nc.api(DeckClient).set_user(board_id, card, user, assigned=False)
    # The card as read, or Deck's answer to its update, is the card unless labels or users changed
    # since (their answers do not carry the card): read back only then (issue 43).
    changed = card
    if labels_on or labels_off or users_on or users_off:
        changed = await nc.api(DeckClient).card(board_id, stack_id, card_id)
    return card_detail(
        board_id, changed, [], DESCRIPTION_SHOWN, nc.api(DeckClient).web_url(board_id, changed.id)
    )


@toolset.tool(title="Comment on a Deck card", view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_add_comment(
    card_id: CardId,
    # Nextcloud's comments hold 1,000 characters (measured on 29 and 34: 1,001 is refused)
    message: Annotated[str, Field(max_length=MAX_COMMENT, description="@user mentions work")],
    ctx: Context[Any, Any],
) -> Comment:
    """Add a comment to a card (needs only the card id); everyone on its board can read it, so
    where that is more than one other person the user is asked to approve it first."""
    message = check_comment(message)
    nc = await nextcloud_for(ctx)
    me = await nc.dav_user_id()
    await approve_publication(
        ctx,
        tool="nc_deck_add_comment",
        audience=await card_audience(nc, card_id, me, message),
        text=message,
        action="Comment",
        again=lambda: card_audience(nc, card_id, me, message),
    )
    return comment_view(await nc.api(DeckClient).add_comment(card_id, message))


@toolset.tool(title="Upcoming Deck cards", read_only=True)
@require_scopes(DECK_READ)
async def nc_deck_upcoming_cards(
    ctx: Context[Any, Any], limit: Annotated[int, Field(ge=1, le=200)] = 50
) -> UpcomingCards:
    """Your cards with a due date across all boards, overdue first, with board and stack."""
    nc = await nextcloud_for(ctx)
    groups = await nc.api(DeckClient).upcoming()
    found = [
        upcoming_card(card, card.board.title if card.board else "", group)
        for group in UPCOMING_GROUPS
        for card in sorted(groups[group], key=lambda c: (c.duedate or "", c.id))
        if card.duedate and not card.archived
    ]
    return UpcomingCards(cards=found[:limit], total=len(found))


@toolset.tool(title="Delete a Deck card", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_delete_card(
    board_id: BoardId, stack_id: StackId, card_id: CardId, ctx: Context[Any, Any]
) -> DeletedItem:
    """Delete a card from its board. The user is asked to approve first."""
    nc = await nextcloud_for(ctx)
    board, card = await locate(nc, board_id, stack_id, card_id)
    target = f'the card "{cut(card.title, 100)}"'
    where = f'in stack "{cut(stack_title(board, stack_id), 60)}" of board "{cut(board.title, 60)}"'
    question = f"Delete {target} {where}?"
    tool = "nc_deck_delete_card"
    version = version_of(card)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if asked and version_of(await nc.api(DeckClient).card(board_id, stack_id, card_id)) != version:
        await refuse_changed(ctx, tool=tool, target=target)
    await nc.api(DeckClient).delete_card(board_id, stack_id, card_id)
    return DeletedItem(id=card.id, title=cut(card.title))


@toolset.tool(title="Delete a Deck board", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECK_WRITE)
async def nc_deck_delete_board(board_id: BoardId, ctx: Context[Any, Any]) -> DeletedItem:
    """Delete a board with all its cards. The user is asked to approve first."""
    nc = await nextcloud_for(ctx)
    board = await nc.api(DeckClient).board(board_id)
    if not board.can("manage"):
        raise InvalidDeckInput(f"only the owner or a manager of board {board_id} can delete it")
    stacks = await nc.api(DeckClient).stacks(board_id)
    cards = sum(len(stack.cards) for stack in stacks)
    target = f'the board "{cut(board.title, 100)}"'
    shared = f", shared with {len(board.users) - 1} others" if len(board.users) > 1 else ""
    question = f"Delete {target} with its {len(board.stacks)} stacks and {cards} cards{shared}?"
    tool = "nc_deck_delete_board"
    version = version_of(board, *stacks)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if (
        asked
        and version_of(await nc.api(DeckClient).board(board_id), *await nc.api(DeckClient).stacks(board_id))
        != version
    ):
        await refuse_changed(ctx, tool=tool, target=target)
    await nc.api(DeckClient).delete_board(board_id)
    return DeletedItem(id=board.id, title=cut(board.title))
