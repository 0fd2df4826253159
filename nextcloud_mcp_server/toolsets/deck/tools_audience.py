"""Who reads a comment on a Deck card (ADR 0058): everyone with access to its board (its owner
and the users Deck lists for it), the members of the groups and teams it is shared with, now and
later, and anyone the comment mentions."""

from __future__ import annotations

from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import Forbidden, NotFound
from nextcloud_mcp_server.tools._audience import Audience, mentions
from nextcloud_mcp_server.toolsets.deck.client import DeckAppMissing, DeckClient
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard

__all__ = ["card_audience", "move_audience"]

_KINDS = {1: "the members of the group {}", 7: "the members of the team {}"}


async def card_audience(nc: NextcloudClient, card_id: int, me: str, text: str) -> Audience:
    """Read the card (by its id alone), its stack and its board; Deck names the board's users."""
    try:
        card = await nc.api(DeckClient).card(0, 0, card_id)
    except (NotFound, Forbidden) as exc:  # Deck answers 403 for a card that does not exist
        if isinstance(exc, DeckAppMissing):
            raise
        said = f"card {card_id} does not exist, or it is not shared with you"
        raise type(exc)(nc.api(DeckClient).host, said, status=exc.status, body=exc.body) from None
    stack = await nc.api(DeckClient).stack_of(card.stack_id)
    board = await nc.api(DeckClient).board(stack.board_id)
    readers, open_to = _readers(board, me), _open_to(board)
    where = f'the comments of the card "{card.title[:100]}" on the board "{board.title[:100]}"'
    facts = (
        f"board:{board.id}:{board.title}",
        f"card:{card.id}:{card.title}",
        *(f"acl:{e.type}/{e.participant.uid}" for e in board.acl),
        *(f"user:{uid}" for uid in readers),
    )
    audience = Audience(where, tuple(readers.values()), tuple(open_to), facts)
    return audience.with_mentions(mentions(text), {*readers, me})


def _readers(board: DeckBoard, me: str) -> dict[str, str]:
    return {u.uid: u.displayname or u.uid for u in [board.owner, *board.users] if u.uid and u.uid != me}


def _open_to(board: DeckBoard) -> list[str]:
    return sorted(
        _KINDS[entry.type].format(entry.participant.displayname or entry.participant.uid)
        for entry in board.acl
        if entry.type in _KINDS
    )


def move_audience(source: DeckBoard, target: DeckBoard, card: DeckCard, me: str) -> Audience:
    """Who newly reads a card moved from `source` to `target`: the target board's readers who
    cannot read the source board, and its groups and teams the source board is not shared with."""
    before = _readers(source, me)
    readers = {uid: name for uid, name in _readers(target, me).items() if uid not in before}
    open_to = sorted(set(_open_to(target)) - set(_open_to(source)))
    where = f'the board "{target.title[:100]}" (from "{source.title[:100]}")'
    facts = (
        f"board:{source.id}:{source.title}",
        f"board:{target.id}:{target.title}",
        f"card:{card.id}:{card.title}:{card.description}",
        *(f"acl:{board.id}:{e.type}/{e.participant.uid}" for board in (source, target) for e in board.acl),
        *(f"user:{board.id}:{u.uid}" for board in (source, target) for u in [board.owner, *board.users]),
    )
    return Audience(where, tuple(readers.values()), tuple(open_to), facts)
