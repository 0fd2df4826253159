"""The parts of a `nextcloud://` URI and the listing's cursor, checked without a server: each
malformed value is refused with a reason, each good one means exactly one thing."""

from __future__ import annotations

from datetime import date

import pytest

from nextcloud_mcp_server.nextcloud.models import Note
from nextcloud_mcp_server.resources import KINDS, contact_uri, file_uri
from nextcloud_mcp_server.resources._kinds import match
from nextcloud_mcp_server.resources._listing import MAX_NOTES, PAGE_SIZE, _cursor, _offset
from nextcloud_mcp_server.resources._readers import note_markdown
from nextcloud_mcp_server.resources._uris import BadUri, note_id, span_of, week_of


def test_a_day_and_an_iso_week() -> None:
    assert span_of("2026-11-26") == span_of("2026-11-26")
    day = span_of("2026-11-26")
    assert (day.first, day.end, day.kind) == (date(2026, 11, 26), date(2026, 11, 27), "day")
    week = span_of("2026-W48")
    assert (week.first, week.end, week.kind) == (date(2026, 11, 23), date(2026, 11, 30), "week")
    assert span_of("2020-W53").first == date(2020, 12, 28)  # a year with 53 ISO weeks
    assert week_of(date(2027, 1, 1)) == "2026-W53"
    assert week_of(date(2026, 11, 29)) == "2026-W48"


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30",
        "2026-13-01",
        "0000-01-01",
        "9999-12-31",
        "9999-W52",
        "2026-W54",
        "2026-W00",
        "2026-W5",
        "26-11-26",
        "2026-11-26T10:00",
        "\uff12\uff10\uff12\uff16-11-26",
        "tomorrow",
        "",
        "2026-W48\n",
    ],
)
def test_what_is_not_a_day_or_week_is_refused(text: str) -> None:
    with pytest.raises(BadUri, match="is not a day like 2026-11-26"):
        span_of(text)


@pytest.mark.parametrize("text", ["0", "-1", "1.0", "abc", "١٢", "9223372036854775808", "1" * 40, ""])
def test_what_is_not_a_note_id_is_refused(text: str) -> None:
    with pytest.raises(BadUri, match="a note id is a whole number"):
        note_id(text)


def test_note_ids_at_the_bounds() -> None:
    assert note_id("1") == 1
    assert note_id("9223372036854775807") == 2**63 - 1


def test_uris_round_trip_through_their_templates() -> None:
    uri = file_uri("Docs/plan é#?.md")
    found = match(uri)
    assert found is not None
    assert (found[0].name, found[1]) == ("file", {"path": "Docs/plan é#?.md"})
    found = match(contact_uri("contacts", "a/b c"))
    assert found is not None
    assert found[1] == {"addressbook": "contacts", "uid": "a/b c"}
    assert match("nextcloud://files/" + "a" * 9000) is None
    found = match("nextcloud://calendars/work%202026/2026-W48")
    assert found is not None
    assert (found[0].name, found[1]) == ("one-calendar", {"calendar": "work 2026", "date": "2026-W48"})
    scopes = [k.scope for k in KINDS]
    assert scopes == ["notes:read", "files:read", "calendar:read", "calendar:read", "contacts:read"]


def test_a_cursor_is_only_what_this_server_gave_out() -> None:
    assert _offset(None) == 0
    assert _offset(_cursor(PAGE_SIZE)) == PAGE_SIZE
    for forged in [
        "",
        "x",
        _cursor(0),
        _cursor(-5),
        _cursor(MAX_NOTES + 3),
        "eyJvZmZzZXQiOiB0cnVlfQ",
        "A" * 200,
    ]:
        with pytest.raises(BadUri, match="cursor was not given out"):
            _offset(forged)


def test_a_note_gets_its_title_once() -> None:
    assert note_markdown(Note(id=1, title="Plan", content="# Plan\n\nx")) == "# Plan\n\nx"
    assert note_markdown(Note(id=1, title="Plan", content="Plan\nx")) == "Plan\nx"
    assert note_markdown(Note(id=1, title="Plan", content="x")) == "# Plan\n\nx"
    assert note_markdown(Note(id=1, title="Plan", content="")) == "# Plan\n"


@pytest.mark.parametrize("text", ["0001-01-01", "0001-W01", "0999-12-31", "9999-01-01"])
def test_a_day_or_week_at_the_ends_of_the_calendar_is_refused(text: str) -> None:
    """Year 1 was a Span, and the calendar's range less its slack overflowed: an internal error."""
    with pytest.raises(BadUri, match="from the year 1000 to 9998"):
        span_of(text)
    assert span_of("9998-W52").kind == "week"
