"""iCalendar logic: nothing lost on round-trip, recurrence with overrides, free time."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import icalendar
import pytest

from nextcloud_mcp_server.nextcloud.dav import free_time, ical, ical_read
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

BERLIN = ical.zone("Europe/Berlin")

# A weekly series from another client: unknown X- properties, an alarm, attendees, categories,
# an exclusion (Dec 7) and a moved occurrence (Dec 14, 09:00 -> 15:00).
SERIES = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Other Client//EN
BEGIN:VEVENT
UID:series-1
DTSTAMP:20261101T000000Z
DTSTART;TZID=Europe/Berlin:20261123T090000
DTEND;TZID=Europe/Berlin:20261123T093000
RRULE:FREQ=WEEKLY;COUNT=5
EXDATE;TZID=Europe/Berlin:20261207T090000
SUMMARY:Standup
CATEGORIES:Work,Daily
X-OTHER-CLIENT-COLOR:teal
ATTENDEE;CN=Bob;PARTSTAT=ACCEPTED:mailto:bob@example.com
BEGIN:VALARM
ACTION:DISPLAY
DESCRIPTION:Standup
TRIGGER:-PT10M
X-ALARM-SNOOZE:5
END:VALARM
END:VEVENT
BEGIN:VEVENT
UID:series-1
DTSTAMP:20261101T000000Z
RECURRENCE-ID;TZID=Europe/Berlin:20261214T090000
DTSTART;TZID=Europe/Berlin:20261214T150000
DTEND;TZID=Europe/Berlin:20261214T153000
SUMMARY:Standup (moved)
END:VEVENT
END:VCALENDAR
"""


def window(start: str, end: str) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(start).replace(tzinfo=UTC), datetime.fromisoformat(end).replace(tzinfo=UTC)


def test_occurrences_honour_exclusions_and_moved_occurrences() -> None:
    """Five weekly occurrences, one excluded, one moved: four come back, the moved one at 15:00."""
    starts = [
        (ical_read.event_view(o, recurring=r)["start"], ical_read.event_view(o, recurring=r)["summary"])
        for o, r in ical_read.expand_events(SERIES, *window("2026-11-01", "2027-01-01"))
    ]
    assert sorted(starts) == [
        ("2026-11-23T09:00:00+01:00", "Standup"),
        ("2026-11-30T09:00:00+01:00", "Standup"),
        ("2026-12-14T15:00:00+01:00", "Standup (moved)"),
        ("2026-12-21T09:00:00+01:00", "Standup"),
    ]


def test_an_update_keeps_everything_it_does_not_touch() -> None:
    """Changing the summary leaves X- properties, alarms (with their own X- props), attendees,
    categories, the exclusion and the override exactly as they were."""
    patched = ical.patch_event(SERIES, ical.EventChanges(summary="Daily standup"))
    before, after = icalendar.Calendar.from_ical(SERIES), icalendar.Calendar.from_ical(patched)
    old_master, new_master = ical.master(before, "VEVENT"), ical.master(after, "VEVENT")
    assert str(new_master["SUMMARY"]) == "Daily standup"
    for name in ("X-OTHER-CLIENT-COLOR", "CATEGORIES", "ATTENDEE", "EXDATE", "RRULE", "DTSTART", "DTEND"):
        assert new_master[name].to_ical() == old_master[name].to_ical(), name
    assert [a.to_ical() for a in new_master.walk("VALARM")] == [
        a.to_ical() for a in old_master.walk("VALARM")
    ]
    overrides = [c for c in after.walk("VEVENT") if "RECURRENCE-ID" in c]
    assert [str(c["SUMMARY"]) for c in overrides] == ["Standup (moved)"]
    assert int(new_master["SEQUENCE"]) == 1


def test_moving_an_event_keeps_its_duration() -> None:
    new_start = datetime(2026, 11, 24, 10, 0, tzinfo=BERLIN)
    patched = ical.patch_event(SERIES, ical.EventChanges(start=new_start))
    view = ical_read.event_view(ical.master(ical.load(patched), "VEVENT"), recurring=True)
    assert (view["start"], view["end"]) == ("2026-11-24T10:00:00+01:00", "2026-11-24T10:30:00+01:00")


def test_a_built_event_carries_timezone_alarm_attendees_and_rule() -> None:
    ics = ical.build_event(
        "u-1",
        ical.EventChanges(
            summary="Planning",
            start=datetime(2026, 3, 29, 10, 0, tzinfo=BERLIN),  # the day clocks change in Berlin
            end=datetime(2026, 3, 29, 11, 0, tzinfo=BERLIN),
            rrule="FREQ=DAILY;COUNT=2",
            reminders=[15, 60],
            attendees=[ical.Attendee("ann@example.com", "Ann")],
        ),
    )
    assert "BEGIN:VTIMEZONE" in ics
    assert "TZID:Europe/Berlin" in ics
    view = ical_read.event_view(ical.master(ical.load(ics), "VEVENT"), recurring=True)
    assert view["start"] == "2026-03-29T10:00:00+02:00"
    assert view["timezone"] == "Europe/Berlin"
    assert view["reminders"] == [15, 60]
    assert view["attendees"] == [{"email": "ann@example.com", "name": "Ann", "status": "NEEDS-ACTION"}]
    assert view["recurrence"] == "FREQ=DAILY;COUNT=2"


def test_all_day_events_are_dates() -> None:
    ics = ical.build_event(
        "d", ical.EventChanges(summary="Trip", start=date(2026, 12, 1), end=date(2026, 12, 4))
    )
    [(occurrence, _)] = ical_read.expand_events(ics, *window("2026-12-02", "2026-12-03"))
    view = ical_read.event_view(occurrence, recurring=False)
    assert (view["start"], view["end"], view["all_day"]) == ("2026-12-01", "2026-12-04", True)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (ical.EventChanges(summary="x", start=date(2026, 1, 2), end=date(2026, 1, 1)), "end must be after"),
        (
            ical.EventChanges(summary="x", start=date(2026, 1, 2), end=datetime(2026, 1, 3, tzinfo=UTC)),
            "must both be dates",
        ),
        (ical.EventChanges(summary="x", start=date(2026, 1, 2), rrule="FREQ=SOMETIMES"), "not a valid RRULE"),
        (ical.EventChanges(summary="x", start=date(2026, 1, 2), reminders=[-5]), "0 to 527040"),
        (
            ical.EventChanges(summary="x", start=date(2026, 1, 2), reminders=[10**15]),
            "0 to 527040",
        ),  # overflowed
        (
            ical.EventChanges(summary="x", start=date(2026, 1, 2), attendees=[ical.Attendee("not-an-email")]),
            "not an e-mail",
        ),
        (ical.EventChanges(summary="", start=date(2026, 1, 2)), "needs a summary"),
    ],
)
def test_bad_event_input_is_refused(changes: ical.EventChanges, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        ical.build_event("x", changes)


def test_times_are_parsed_in_the_given_zone_unless_they_carry_an_offset() -> None:
    assert ical.parse_moment("2026-11-23", BERLIN) == date(2026, 11, 23)
    assert ical.parse_moment("2026-11-23T10:00", BERLIN) == datetime(2026, 11, 23, 10, tzinfo=BERLIN)
    assert ical.parse_moment("2026-11-23T10:00Z", BERLIN).utcoffset() == timedelta(0)
    with pytest.raises(InvalidInput, match="not an ISO 8601"):
        ical.parse_moment("next tuesday", BERLIN)
    with pytest.raises(InvalidInput, match="unknown time zone"):
        ical.zone("Mars/Olympus")


def test_tasks_complete_and_reopen() -> None:
    ics = ical.build_todo("t", ical.TodoChanges(summary="File taxes", due=date(2026, 12, 31), priority=1))
    done = ical_read.todo_view(
        ical.master(ical.load(ical.patch_todo(ics, ical.TodoChanges(completed=True))), "VTODO")
    )
    assert (done["status"], done["completed"], done["percent_complete"]) == ("COMPLETED", True, 100)
    assert done["completed_at"] is not None
    reopened_ics = ical.patch_todo(
        ical.patch_todo(ics, ical.TodoChanges(completed=True)), ical.TodoChanges(completed=False)
    )
    reopened = ical_read.todo_view(ical.master(ical.load(reopened_ics), "VTODO"))
    assert (reopened["status"], reopened["completed"], reopened["completed_at"]) == (
        "NEEDS-ACTION",
        False,
        None,
    )
    assert reopened["due"] == "2026-12-31"
    assert reopened["priority"] == 1


def test_a_deck_task_with_an_empty_categories_line_has_no_categories() -> None:
    """Deck's tasks carry `CATEGORIES:` with nothing in it: no category, not one named ""."""
    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Nextcloud Deck//EN\r\nBEGIN:VTODO\r\n"
        "UID:deck-card-1\r\nSUMMARY:Card\r\nCATEGORIES:\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
    )
    assert ical_read.todo_view(ical.master(ical.load(ics), "VTODO"))["categories"] == []
    labelled = ics.replace("CATEGORIES:", "CATEGORIES:Urgent,")
    assert ical_read.todo_view(ical.master(ical.load(labelled), "VTODO"))["categories"] == ["Urgent"]


def _event(start: datetime, end: datetime, **props: str) -> icalendar.Event:
    event = icalendar.Event()
    event.add("DTSTART", start)
    event.add("DTEND", end)
    for name, value in props.items():
        event.add(name, value)
    return event


def test_free_slots_skip_busy_time_weekends_and_non_working_hours() -> None:
    """Mon 10-11 busy; a transparent and a cancelled event do not block; Sat/Sun skipped."""
    monday = datetime(2026, 11, 23, tzinfo=BERLIN)
    occurrences = [
        _event(monday.replace(hour=10), monday.replace(hour=11)),
        _event(monday.replace(hour=13), monday.replace(hour=14), TRANSP="TRANSPARENT"),
        _event(monday.replace(hour=15), monday.replace(hour=16), STATUS="CANCELLED"),
    ]
    slots = free_time.free_slots(
        free_time.busy_intervals(occurrences, BERLIN),
        start=monday - timedelta(days=2),  # Saturday
        end=monday + timedelta(days=1),
        duration=timedelta(minutes=60),
        day_start=time(9),
        day_end=time(17),
        tz=BERLIN,
        weekdays={0, 1, 2, 3, 4},
    )
    assert [(s.isoformat(), e.isoformat()) for s, e in slots] == [
        ("2026-11-23T09:00:00+01:00", "2026-11-23T10:00:00+01:00"),
        ("2026-11-23T11:00:00+01:00", "2026-11-23T17:00:00+01:00"),
    ]


def test_gaps_shorter_than_the_duration_are_not_offered() -> None:
    monday = datetime(2026, 11, 23, tzinfo=BERLIN)
    busy = [(monday.replace(hour=9, minute=30), monday.replace(hour=16, minute=45))]
    slots = free_time.free_slots(
        busy,
        start=monday,
        end=monday + timedelta(days=1),
        duration=timedelta(minutes=45),
        day_start=time(9),
        day_end=time(17),
        tz=BERLIN,
        weekdays={0},
    )
    assert slots == []


def _one(kind: str, lines: str) -> icalendar.cal.Component:
    ics = (
        f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:{kind}\r\nUID:u1\r\n{lines}\r\n"
        f"END:{kind}\r\nEND:VCALENDAR\r\n"
    )
    return ical.master(ical.load(ics), kind)


@pytest.mark.parametrize(
    "lines",
    [
        "SUMMARY:no start",  # AttributeError before
        "DTSTART:abc",  # icalendar's BrokenCalendarProperty
        "DTSTART:20260101T100000Z\r\nDTEND:notadate",
        "DTSTART:20260101T100000Z\r\nDURATION:P999999999W",
        "DTSTART;VALUE=DATE:99991231",  # a day after it is past year 9999: OverflowError
    ],
)
def test_an_event_that_cannot_be_read_is_invalid_input_saying_so(lines: str) -> None:
    with pytest.raises(InvalidInput, match="could not be read"):
        ical_read.event_view(_one("VEVENT", lines), recurring=False)


def test_a_task_that_cannot_be_read_is_invalid_input_and_says_little_of_it() -> None:
    with pytest.raises(InvalidInput, match="could not be read"):
        ical_read.todo_view(_one("VTODO", "DUE:20260101T100000Z\r\nDUE:20260102T100000Z"))  # DUE twice
    with pytest.raises(InvalidInput) as refused:  # the value in the message is cut
        _one("VTODO", "PERCENT-COMPLETE:" + "9" * 5000)
    assert len(str(refused.value)) < 300


def test_free_time_with_an_unreadable_occurrence_says_so_rather_than_offer_it() -> None:
    broken = _one("VEVENT", "DTSTART:20260105T100000Z\r\nDTEND:notadate")
    with pytest.raises(InvalidInput, match="could not be read"):
        free_time.busy_intervals([broken], UTC)


@pytest.mark.parametrize("name", ["America", "Europe", "x" * 300, "../etc"])
def test_a_time_zone_that_is_a_folder_or_too_long_is_unknown(name: str) -> None:
    """`America` is a folder of zones: ZoneInfo raised IsADirectoryError; 300 characters raised
    OSError (name too long). Both escaped as internal errors from every calendar tool."""
    with pytest.raises(InvalidInput, match="unknown time zone") as refused:
        ical.zone(name)
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize(
    "text", ["0001-01-01", "0001-01-01T00:00:00+14:00", "9999-12-31", "9999-12-31T23:30:00"]
)
def test_a_date_at_the_ends_of_the_calendar_is_refused(text: str) -> None:
    """Year 1 minus the range's slack, or 9999 plus a day's end, overflowed the date type."""
    with pytest.raises(InvalidInput, match="from the year 1000 to 9998"):
        ical.parse_moment(text, UTC)
    assert ical.parse_moment("9998-12-31", UTC) == date(9998, 12, 31)
