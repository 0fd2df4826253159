"""Which calendar objects a week's listing on Nextcloud 29 leaves unread (`ical_screen`): only a
plain event that starts after the bound; anything that may repeat, or does not read, is kept."""

from __future__ import annotations

from datetime import date

import pytest

from nextcloud_mcp_server.nextcloud.dav.ical_screen import starts_after

BOUND = date(2026, 12, 1)


def _object(*lines: str, extra: str = "") -> str:
    event = "\r\n".join(("BEGIN:VEVENT", "UID:x", "DTSTAMP:20260101T000000Z", *lines, "END:VEVENT"))
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n{extra}{event}\r\nEND:VCALENDAR\r\n"


@pytest.mark.parametrize(
    "start",
    [
        "DTSTART:20270818T014500Z",
        "DTSTART:20261202T000000",  # floating, the day after the bound
        "DTSTART;VALUE=DATE:20261202",
        "DTSTART;TZID=Pacific/Kiritimati:20261202T000000",
        'DTSTART;X-NOTE="a:b;c":20270101T000000Z',  # a quoted parameter holding ":" and ";"
        "dtstart:20270101T000000Z",  # names are case-insensitive
    ],
)
def test_a_plain_event_after_the_bound_is_left_unread(start: str) -> None:
    assert starts_after(_object(start, "SUMMARY:Later"), BOUND)


def test_a_folded_start_line_is_read_whole() -> None:
    assert starts_after(_object("DTSTART;VALUE=DATE:2026\r\n 1202"), BOUND)
    assert not starts_after(_object("DTSTART;VALUE=DATE:2026\r\n 1201"), BOUND)


def test_an_alarm_does_not_keep_it() -> None:
    alarm = "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM"
    assert starts_after(_object("DTSTART:20270101T000000Z", alarm), BOUND)


@pytest.mark.parametrize(
    ("lines", "extra"),
    [
        (("DTSTART:20261201T230000Z",), ""),  # on the bound's date: kept
        (("DTSTART:20261124T100000Z",), ""),
        (("DTSTART:20270101T000000Z", "RRULE:FREQ=YEARLY"), ""),
        (("DTSTART:20270101T000000Z", "RDATE:20261125T100000Z"), ""),
        (("DTSTART:20270101T000000Z", "EXDATE:20270101T000000Z"), ""),
        (("DTSTART:20270101T000000Z", "RECURRENCE-ID:20261125T100000Z"), ""),
        (("DTSTART:20270101T000000Z", "Rrule:FREQ=DAILY"), ""),
        (("DTSTART:20270101T000000Z",), "BEGIN:VTIMEZONE\r\nTZID:X\r\nEND:VTIMEZONE\r\n"),
        (("DTSTART:20270101T000000Z",), "BEGIN:VTODO\r\nUID:t\r\nEND:VTODO\r\n"),
        (("DTSTART:20270101T000000Z",), "BEGIN:VEVENT\r\nUID:y\r\nDTSTART:20270102\r\nEND:VEVENT\r\n"),
        (("DTSTART:20270101T000000Z", "DTSTART:20261124T100000Z"), ""),  # two starts
        (("SUMMARY:no start",), ""),
        (("DTSTART:2027-01-01",), ""),  # not a date value
        (("DTSTART:20271301T000000Z",), ""),  # month 13
        (("DTSTART:20270101X000000Z",), ""),
        (("DTSTART:" + "\uff12\uff10\uff12\uff17\uff10\uff11\uff10\uff11",), ""),  # fullwidth digits
    ],
)
def test_anything_that_may_repeat_or_does_not_read_is_kept(lines: tuple[str, ...], extra: str) -> None:
    assert not starts_after(_object(*lines, extra=extra), BOUND)


@pytest.mark.parametrize(
    "ics",
    [
        "",
        "not a calendar",
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20270101T000000Z\r\n",  # never closed
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20270101T000000Z\r\nEND:VCALENDAR\r\nEND:VEVENT\r\n",
    ],
)
def test_a_broken_object_is_kept(ics: str) -> None:
    assert not starts_after(ics, BOUND)
