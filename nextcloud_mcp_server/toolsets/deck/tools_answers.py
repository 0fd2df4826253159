"""What the Deck tools answer: short views of Deck's boards, stacks, cards and comments, with every
list and text bounded (what was cut is said in `notes`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard, DeckComment

__all__ = [
    "BoardDetail",
    "BoardList",
    "BoardSummary",
    "CardDetail",
    "CardSummary",
    "Comment",
    "DeletedItem",
    "StackView",
    "UpcomingCard",
    "UpcomingCards",
    "board_summary",
    "card_detail",
    "card_summary",
    "comment_view",
    "cut",
    "upcoming_card",
]

SHOWN_TITLE = 300  # characters of a title or name shown
SHOWN_COMMENT = 2000


def cut(text: str | None, limit: int = SHOWN_TITLE) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + "…"


class BoardSummary(BaseModel):
    id: int
    title: str
    owner: str
    archived: bool


class BoardList(BaseModel):
    boards: list[BoardSummary]
    total: int = Field(description="How many boards matched before limit/offset")


class CardSummary(BaseModel):
    id: int
    title: str
    due: str | None = Field(default=None, description="ISO 8601")
    done: bool = False
    labels: list[str] = Field(default_factory=list)
    assigned: list[str] = Field(default_factory=list, description="User ids")


class StackView(BaseModel):
    id: int
    title: str
    cards: list[CardSummary] = Field(description="In the stack's order, top first")
    card_count: int


class BoardDetail(BaseModel):
    id: int
    title: str
    url: str = Field(default="", description="Opens the board in Deck")
    owner: str
    labels: list[str]
    members: list[str] = Field(description="User ids that can be assigned")
    stacks: list[StackView]
    notes: list[str] = Field(default_factory=list, description="What was left out")


class Comment(BaseModel):
    id: int
    author: str
    created: str
    message: str


class CardDetail(CardSummary):
    board_id: int
    stack_id: int
    url: str = Field(default="", description="Opens the card in Deck")
    description: str
    owner: str
    etag: str
    comment_count: int
    comments: list[Comment] = Field(description="Newest first")
    notes: list[str] = Field(default_factory=list)


class UpcomingCard(CardSummary):
    board_id: int
    board: str
    stack_id: int
    when: str = Field(description="overdue, today, tomorrow, nextSevenDays or later")


class UpcomingCards(BaseModel):
    cards: list[UpcomingCard] = Field(description="Soonest due first")
    total: int


class DeletedItem(BaseModel):
    id: int
    title: str
    deleted: bool = True


def board_summary(board: DeckBoard) -> BoardSummary:
    return BoardSummary(id=board.id, title=cut(board.title), owner=board.owner.uid, archived=board.archived)


def card_summary(card: DeckCard) -> CardSummary:
    return CardSummary(**_summary_fields(card))


def _summary_fields(card: DeckCard) -> dict[str, Any]:
    return {
        "id": card.id,
        "title": cut(card.title),
        "due": card.duedate,
        "done": bool(card.done),
        "labels": [cut(label.title, 100) for label in card.labels[:50]],
        "assigned": [cut(a.participant.uid, 100) for a in card.assigned_users[:50]],
    }


def card_detail(
    board_id: int, card: DeckCard, comments: list[DeckComment], shown: int, url: str = ""
) -> CardDetail:
    notes = []
    description = card.description or ""
    if len(description) > shown:
        notes.append(f"the description is {len(description)} characters; the first {shown} are shown")
        description = description[:shown] + "…"
    return CardDetail(
        **_summary_fields(card),
        board_id=board_id,
        stack_id=card.stack_id,
        url=url,
        description=description,
        owner=card.owner.uid,
        etag=card.etag,
        comment_count=card.comments_count,
        comments=[comment_view(c) for c in comments],
        notes=notes,
    )


def upcoming_card(card: DeckCard, board: str, when: str) -> UpcomingCard:
    return UpcomingCard(
        **_summary_fields(card),
        board_id=card.board_id or 0,
        board=cut(board),
        stack_id=card.stack_id,
        when=when,
    )


def comment_view(comment: DeckComment) -> Comment:
    return Comment(
        id=comment.id,
        author=cut(comment.actor_id, 100),
        created=comment.created,
        message=cut(comment.message, SHOWN_COMMENT),
    )
