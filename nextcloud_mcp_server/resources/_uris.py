"""The `nextcloud://` URIs of resources: their templates, how to build one, and how the parts a
client sends are checked (a URI is untrusted input, like a tool's arguments)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.models import FIRST_YEAR, LAST_YEAR
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "CALENDAR_TEMPLATE",
    "CONTACT_TEMPLATE",
    "FILE_TEMPLATE",
    "MAX_URI_CHARS",
    "NOTE_TEMPLATE",
    "ONE_CALENDAR_TEMPLATE",
    "SCHEME",
    "BadUri",
    "Span",
    "calendar_uri",
    "contact_uri",
    "file_uri",
    "note_id",
    "note_uri",
    "span_of",
    "week_of",
]

SCHEME = "nextcloud://"
NOTE_TEMPLATE = "nextcloud://notes/{id}"
FILE_TEMPLATE = "nextcloud://files/{+path}"
CALENDAR_TEMPLATE = "nextcloud://calendar/{date}"
ONE_CALENDAR_TEMPLATE = "nextcloud://calendars/{calendar}/{date}"
CONTACT_TEMPLATE = "nextcloud://contacts/{addressbook}/{uid}"
MAX_URI_CHARS = 8192  # a file path is at most 4096 characters (the tools' limit), percent-encoded
MAX_NOTE_ID = 2**63 - 1
_DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")  # ASCII digits only, the whole text
_WEEK = re.compile(r"([0-9]{4})-W([0-9]{2})")


class BadUri(InvalidInput):
    """A `nextcloud://` URI that names nothing that could exist (malformed, out of range)."""


@dataclass(frozen=True)
class Span:
    """The days a calendar resource covers: [first, end) in the user's default time zone."""

    first: date
    end: date
    kind: str  # "day" or "week"


def note_uri(note_id: int) -> str:
    return f"{SCHEME}notes/{note_id}"


def file_uri(path: str) -> str:
    """The URI of a cleaned path (segments percent-encoded, so '#' and '?' stay in the name)."""
    return f"{SCHEME}files/{paths.encode(path)}"


def calendar_uri(day_or_week: str) -> str:
    return f"{SCHEME}calendar/{day_or_week}"


def contact_uri(address_book: str, uid: str) -> str:
    return f"{SCHEME}contacts/{quote(address_book, safe='')}/{quote(uid, safe='')}"


def note_id(text: str) -> int:
    """A note id as the Notes app hands them out: digits, 1 to 2^63-1."""
    number = ascii_number(text, max_digits=19)
    if number is None or not 1 <= number <= MAX_NOTE_ID:
        raise BadUri(f"a note id is a whole number from 1 to {MAX_NOTE_ID}, not '{text[:40]}'")
    return number


def week_of(day: date) -> str:
    """The ISO week form of the week `day` is in, e.g. '2026-W48'."""
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def span_of(text: str) -> Span:
    """'2026-11-26' is that day; '2026-W48' is ISO week 48 of 2026, Monday to Sunday."""
    span = _span(text)
    if span is None:
        raise BadUri(
            f"'{text[:40]}' is not a day like 2026-11-26 or an ISO week like 2026-W48 (Monday to Sunday)"
        )
    if not FIRST_YEAR <= span.first.year <= LAST_YEAR:  # year 1 less the range's slack overflowed
        raise BadUri(f"'{text[:40]}': days and weeks are from the year {FIRST_YEAR} to {LAST_YEAR}")
    return span


def _span(text: str) -> Span | None:
    try:
        if day := _DAY.fullmatch(text):
            first = date(int(day[1]), int(day[2]), int(day[3]))
            return Span(first, first + timedelta(days=1), "day")
        if week := _WEEK.fullmatch(text):
            first = date.fromisocalendar(int(week[1]), int(week[2]), 1)
            return Span(first, first + timedelta(days=7), "week")
    except (ValueError, OverflowError):  # no such day or week; the last week of year 9999
        pass
    return None
