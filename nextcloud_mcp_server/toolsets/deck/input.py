"""What the Deck client accepts from a caller, checked before anything is sent: titles, texts,
due dates, user ids and label names. Each check raises `InvalidDeckInput` naming the limit."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckLabel

__all__ = [
    "MAX_COMMENT",
    "MAX_DESCRIPTION",
    "MAX_TITLE",
    "InvalidDeckInput",
    "check_card_title",
    "check_comment",
    "check_description",
    "check_due",
    "check_names",
    "check_user_id",
    "resolve_labels",
]

MAX_TITLE = 255  # Deck's own limit for a card title
MAX_DESCRIPTION = 100_000  # characters of a card's Markdown description
MAX_COMMENT = 1000  # Nextcloud's comments hold at most 1000 characters
MAX_NAME = 100  # Deck's limit for the title of a board, a stack or a label
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # tab and newline are text
_LINE_BREAK = re.compile(r"[\r\n]")


class InvalidDeckInput(InvalidInput):
    """A card title, text, date, user or label Deck would refuse or mangle; nothing was sent."""


def check_card_title(title: str) -> str:
    cleaned = title.strip()
    if not cleaned:
        raise InvalidDeckInput("the card title must not be empty")
    if _CONTROL.search(cleaned) or _LINE_BREAK.search(cleaned):
        raise InvalidDeckInput("the card title must be one line without control characters")
    check_visible(cleaned, "title")
    if len(cleaned) > MAX_TITLE:
        raise InvalidDeckInput(f"the card title must be at most {MAX_TITLE} characters (got {len(cleaned)})")
    return cleaned


def check_description(text: str) -> str:
    if _CONTROL.search(text):
        raise InvalidDeckInput("the description must not contain control characters")
    if len(text) > MAX_DESCRIPTION:
        raise InvalidDeckInput(
            f"the description must be at most {MAX_DESCRIPTION} characters (got {len(text)})"
        )
    return text


def check_comment(message: str) -> str:
    cleaned = message.strip()
    if not cleaned:
        raise InvalidDeckInput("the comment must not be empty")
    if _CONTROL.search(cleaned):
        raise InvalidDeckInput("the comment must not contain control characters")
    if len(cleaned) > MAX_COMMENT:
        raise InvalidDeckInput(f"a comment holds at most {MAX_COMMENT} characters (got {len(cleaned)})")
    return cleaned


def check_due(value: str) -> str:
    """An ISO 8601 date and time with its offset (`2026-12-01T17:00:00+01:00`, or `Z`), in the form
    Deck stores (`+00:00`, seconds)."""
    text = value.strip()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None or "T" not in text:
        raise InvalidDeckInput(
            f"due must be a date and time with its offset, such as 2026-12-01T17:00:00+01:00 "
            f"or 2026-12-01T16:00:00Z (got {text[:40]!r})"
        )
    if not 1970 <= when.year <= 9998:  # before astimezone: year 1 at +14:00 overflowed in it
        raise InvalidDeckInput("due must be between the years 1970 and 9998")
    return when.astimezone(UTC).replace(microsecond=0).isoformat()


def check_user_id(user_id: str) -> str:
    cleaned = user_id.strip()
    if not cleaned or len(cleaned) > 64 or _CONTROL.search(cleaned) or _LINE_BREAK.search(cleaned):
        raise InvalidDeckInput("a user id is 1-64 characters on one line, such as 'alice'")
    return cleaned


def resolve_labels(board: DeckBoard, names: Iterable[str]) -> list[DeckLabel]:
    """The board's labels with these titles (case-insensitive); an unknown or ambiguous name is
    refused, naming the board's labels."""
    found: list[DeckLabel] = []
    for name in names:
        wanted = name.strip().casefold()
        matches = [label for label in board.labels if label.title.strip().casefold() == wanted]
        if len(matches) != 1:
            known = ", ".join(repr(label.title[:40]) for label in board.labels[:30]) or "none"
            problem = "is not a label" if not matches else "names several labels"
            raise InvalidDeckInput(f"{name[:60]!r} {problem} of board {board.id}; its labels: {known}")
        if matches[0] not in found:
            found.append(matches[0])
    return found


def check_names(names: Iterable[str], what: str) -> list[str]:
    """Titles of boards, stacks or labels (`what`): one visible line each, at most 100 characters
    (Deck's limit), none given twice (case-insensitive)."""
    cleaned: list[str] = []
    for name in names:
        text = name.strip()
        if not text or _CONTROL.search(text) or _LINE_BREAK.search(text):
            raise InvalidDeckInput(f"a {what} title must be one non-empty line without control characters")
        check_visible(text, f"{what} title")
        if len(text) > MAX_NAME:
            raise InvalidDeckInput(f"a {what} title must be at most {MAX_NAME} characters (got {len(text)})")
        if text.casefold() in {c.casefold() for c in cleaned}:
            raise InvalidDeckInput(f"the {what} {text[:60]!r} is given twice")
        cleaned.append(text)
    return cleaned
