"""Deck boards as structure: create one with its stacks and labels; rename, archive or restore
one, and add stacks and labels to it. Nothing here destroys or publishes: a new board is the
caller's alone, and archiving is undone by restoring."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import DECK_WRITE, require_scopes
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.deck.client import DeckClient
from nextcloud_mcp_server.toolsets.deck.input import InvalidDeckInput, check_names
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckLabel, DeckStack
from nextcloud_mcp_server.toolsets.deck.tools_answers import cut
from nextcloud_mcp_server.toolsets.deck.tools_common import BoardId, Names, toolset

__all__ = ["BoardMade", "nc_deck_create_board", "nc_deck_update_board"]

BOARD_COLOR = "0082c9"  # Deck's own blue; a board needs a colour
# Deck's label colours, in turn for the labels created here
LABEL_COLORS = ("31CC7C", "317CCC", "FF7A66", "F1DB50", "7C31CC", "CC317C", "3A3B3D", "CACBCD")
Title = Annotated[str, Field(max_length=255)]


class StackRef(BaseModel):
    id: int
    title: str


class BoardMade(BaseModel):
    id: int
    title: str
    url: str = Field(description="Opens the board in Deck")
    archived: bool
    stacks: list[StackRef] = Field(description="Left to right; their ids take cards")
    labels: list[str]
    notes: list[str] = Field(default_factory=list)


Renames = Annotated[
    dict[Annotated[str, Field(max_length=255)], Annotated[str, Field(max_length=255)]],
    Field(max_length=20, description="Current title -> new title"),
]


def _renames(given: dict[str, str], have: list[Any], what: str) -> list[tuple[Any, str]]:
    """(the stack or label, its new title) for each current title given, matched without case;
    an unknown or ambiguous title, or a new title another one has, is refused naming them."""
    found: list[tuple[Any, str]] = []
    new_titles = check_names(given.values(), what)
    for (old, _), new in zip(given.items(), new_titles, strict=True):
        matches = [item for item in have if item.title.strip().casefold() == old.strip().casefold()]
        if len(matches) != 1:
            known = ", ".join(repr(item.title[:40]) for item in have[:30]) or "none"
            raise InvalidDeckInput(
                f"{old[:60]!r} names {len(matches)} {what}s of the board; its {what}s: {known}"
            )
        taken = {item.title.strip().casefold() for item in have} - {old.strip().casefold()}
        if new.casefold() in taken:
            raise InvalidDeckInput(f"the board has a {what} {new[:60]!r} already")
        found.append((matches[0], new))
    return found


def _made(deck: DeckClient, board: DeckBoard, stacks: list[DeckStack], notes: list[str]) -> BoardMade:
    return BoardMade(
        id=board.id,
        title=cut(board.title),
        url=deck.web_url(board.id),
        archived=board.archived,
        stacks=[StackRef(id=s.id, title=cut(s.title)) for s in stacks[:50]],
        labels=[cut(label.title, 100) for label in board.labels[:100]],
        notes=notes,
    )


async def _add(
    deck: DeckClient,
    board: DeckBoard,
    stacks: list[str],
    labels: list[str],
    made: tuple[list[DeckStack], list[DeckLabel]] | None = None,
) -> list[str]:
    """Add stacks to the right of the board's and the labels it does not have yet; what was
    already there is said, not added twice. `made` collects what Deck answered for each."""
    notes: list[str] = []
    made_stacks, made_labels = made if made is not None else ([], [])
    order = max((s.order for s in board.stacks), default=-1) + 1
    for i, title in enumerate(stacks):
        made_stacks.append(await deck.create_stack(board.id, title, order + i))
    have = {label.title.strip().casefold() for label in board.labels}
    for i, title in enumerate(labels):
        if title.casefold() in have:
            notes.append(f"the label {title[:60]!r} was already on the board")
            continue
        color = LABEL_COLORS[(len(board.labels) + i) % len(LABEL_COLORS)]
        made_labels.append(await deck.create_label(board.id, title, color))
    return notes


@toolset.tool(title="Create a Deck board")
@require_scopes(DECK_WRITE)
async def nc_deck_create_board(
    title: Title,
    ctx: Context[Any, Any],
    stacks: Annotated[Names, Field(description="Stack titles, left to right")] = [],  # noqa: B006
    labels: Annotated[Names, Field(description="Label titles besides Deck's defaults")] = [],  # noqa: B006
) -> BoardMade:
    """Create a board of yours with stacks (left to right) and labels; Deck adds its default labels."""
    (name,) = check_names([title], "board")
    wanted_stacks, wanted_labels = check_names(stacks, "stack"), check_names(labels, "label")
    nc = await nextcloud_for(ctx)
    deck = nc.api(DeckClient)
    board = await deck.create_board(name, BOARD_COLOR)
    stacks_made: list[DeckStack] = []
    labels_made: list[DeckLabel] = []
    notes = await _add(deck, board, wanted_stacks, wanted_labels, (stacks_made, labels_made))
    # a new board is what Deck answered for it and for each stack and label (Deck adds no stacks
    # of its own): nothing is read back (issue 43: two requests fewer)
    board = board.model_copy(update={"labels": [*board.labels, *labels_made]})
    return _made(deck, board, stacks_made, notes)


@toolset.tool(title="Change a Deck board", idempotent=True)
@require_scopes(DECK_WRITE)
async def nc_deck_update_board(
    board_id: BoardId,
    ctx: Context[Any, Any],
    title: Annotated[Title | None, Field(description="A new title")] = None,
    archived: Annotated[bool | None, Field(description="Archive, or restore from the archive")] = None,
    add_stacks: Annotated[Names, Field(description="Stack titles, added at the right")] = [],  # noqa: B006
    add_labels: Names = [],  # noqa: B006
    rename_stacks: Renames = {},  # noqa: B006
    rename_labels: Renames = {},  # noqa: B006
) -> BoardMade:
    """Rename, archive or restore a board; add stacks (at the right) and labels; rename them."""
    new_title = check_names([title], "board")[0] if title is not None else None
    stacks, labels = check_names(add_stacks, "stack"), check_names(add_labels, "label")
    if new_title is None and archived is None and not (stacks or labels or rename_stacks or rename_labels):
        raise InvalidDeckInput(
            "give at least one of title, archived, add_stacks, add_labels, rename_stacks or rename_labels"
        )
    nc = await nextcloud_for(ctx)
    deck = nc.api(DeckClient)
    board = await deck.board(board_id)
    if board.deleted_at:
        raise InvalidDeckInput(f"board {board_id} was deleted")
    stack_names = _renames(rename_stacks, board.stacks, "stack")
    label_names = _renames(rename_labels, board.labels, "label")
    # Deck changes nothing on an archived board: restore first, archive last
    if (board.archived and archived is False) or (new_title is not None and archived is not True):
        board = (await deck.update_board(board, title=new_title, archived=archived)).model_copy(
            update={"stacks": board.stacks, "labels": board.labels}
        )
        new_title = None
    if board.archived and (stacks or labels or stack_names or label_names):
        raise InvalidDeckInput(f"board {board_id} is archived; restore it (archived=false) to change it")
    for stack, name in stack_names:
        await deck.rename_stack(board_id, stack, name)
    for label, name in label_names:
        await deck.rename_label(board_id, label, name)
    renamed = {label.id: name for label, name in label_names}
    restack = {stack.id: name for stack, name in stack_names}
    board = board.model_copy(  # labels added next are compared with the new titles
        update={
            "labels": [lb.model_copy(update={"title": renamed.get(lb.id, lb.title)}) for lb in board.labels],
            "stacks": [st.model_copy(update={"title": restack.get(st.id, st.title)}) for st in board.stacks],
        }
    )
    made: tuple[list[DeckStack], list[DeckLabel]] = ([], [])
    notes = await _add(deck, board, stacks, labels, made)
    board = board.model_copy(
        update={"stacks": [*board.stacks, *made[0]], "labels": [*board.labels, *made[1]]}
    )
    if archived is True and (not board.archived or new_title is not None):
        board = (await deck.update_board(board, title=new_title, archived=True)).model_copy(
            update={"stacks": board.stacks, "labels": board.labels}
        )
    # The board as read (its stacks and labels included) with what Deck answered for each change
    # is the board now: nothing is read back (issue 43: two requests fewer).
    return _made(deck, board, sorted(board.stacks, key=lambda s: (s.order, s.id)), notes)
