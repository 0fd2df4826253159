"""The views rendered in Chromium inside the test host (AppBridge + the TypeScript SDK client),
fed by this server over streamable HTTP in front of the double and the real Nextclouds 29 and 34
(the browser visits only the host page, so 34 renders too): the agenda shows the
events another calendar client put there, the free-slots view highlights the gaps between them,
the approval preview shows the entries of a folder about to be deleted while the question waits.
Screenshots are kept in test-artifacts/screenshots/<test>/."""

from __future__ import annotations

import re

import pytest

from tests.apps_host import AppsHost, structured_of
from tests.backends import Nextcloud
from tests.browser import Browser, Person, Screenshots
from tests.mcp_clients import http_session, running_app

pytestmark = [pytest.mark.integration, pytest.mark.browser]

TO = "\u2013"  # the en dash between two times, as the view writes it

BERLIN = """BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""


def _event(uid: str, summary: str, start: str, end: str, location: str = "") -> str:
    if len(start) == 8:  # all day
        when = f"DTSTART;VALUE=DATE:{start}\nDTEND;VALUE=DATE:{end}"
    else:
        when = f"DTSTART;TZID=Europe/Berlin:{start}\nDTEND;TZID=Europe/Berlin:{end}"
    where = f"\nLOCATION:{location}" if location else ""
    return (
        f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Phone//EN\n{BERLIN}\nBEGIN:VEVENT\nUID:{uid}\n"
        f"DTSTAMP:20261101T000000Z\n{when}\nSUMMARY:{summary}{where}\nEND:VEVENT\nEND:VCALENDAR\n"
    ).replace("\n", "\r\n")


def _put_week(nextcloud: Nextcloud) -> None:
    """A week in December 2026, written by another calendar client (a phone) over CalDAV."""
    put = nextcloud.put_calendar_object
    review = _event("review", "Design review", "20261207T100000", "20261207T113000", "Room 4")
    put(nextcloud.admin, "review", review)
    put(nextcloud.admin, "lunch", _event("lunch", "Lunch with Sam", "20261208T123000", "20261208T133000"))
    put(nextcloud.admin, "conf", _event("conf", "Conference", "20261209", "20261211"))


async def _no_csp_violations(person: Person) -> None:
    blocked = [line for line in person.console if "Content Security Policy" in line or "Refused" in line]
    assert not blocked, blocked


async def test_the_agenda_shows_the_real_events_by_day(
    nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    """list_events in the host: one section a day, each event at its own wall-clock time (Berlin,
    whatever the browser's zone), the all-day event on both its days; the host got exactly what a
    client without UI support gets."""
    _put_week(nextcloud)
    arguments = {"start": "2026-12-07", "end": "2026-12-14", "timezone": "Europe/Berlin"}
    with running_app(nextcloud.settings()) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            shown = await host.show("nc_calendar_list_events", arguments)
            text = await host.view_text("section.day", containing="Design review")
            await host.screenshot("agenda")
            await _no_csp_violations(person)
        async with http_session(f"{base}/mcp") as session:
            plain = await session.call_tool("nc_calendar_list_events", arguments)
    assert shown["uri"] == "ui://nextcloud/agenda.html"
    assert shown["mimeType"] == "text/html;profile=mcp-app"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines[:2] == ["Agenda", "3 events · times in Europe/Berlin"], lines
    days = [line for line in lines if line.endswith("2026")]
    assert days == [
        "MONDAY, DECEMBER 7, 2026",
        "TUESDAY, DECEMBER 8, 2026",
        "WEDNESDAY, DECEMBER 9, 2026",
        "THURSDAY, DECEMBER 10, 2026",
    ], lines
    assert f"10:00{TO}11:30" in lines
    assert "Design review" in lines
    assert "Room 4" in lines
    assert f"12:30{TO}13:30" in lines
    assert "Lunch with Sam" in lines
    assert lines.count("Conference") == 2
    assert lines.count("all day") == 2
    assert lines[-1] == "Conference"
    assert "null" not in lines
    # a host with UI support and a client without it get the same result
    texts, content = structured_of(shown["result"])
    assert texts == [block.text for block in plain.content if block.type == "text"]
    assert content == plain.structured_content
    assert [e["summary"] for e in content["events"]] == ["Design review", "Lunch with Sam", "Conference"]


async def test_an_empty_agenda_names_the_range_it_looked_at(
    nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    """A week without events says which week, in the person's words, not "Nothing in this range"."""
    arguments = {"start": "2030-01-07", "end": "2030-01-14", "timezone": "Europe/Berlin"}
    with running_app(nextcloud.settings()) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            await host.show("nc_calendar_list_events", arguments)
            text = await host.view_text("p.empty", containing="No events")
            await host.screenshot("empty agenda")
            await _no_csp_violations(person)
    said = " ".join(text.split())
    assert said.endswith("0 events No events from Monday, January 7, 2030 to Sunday, January 13, 2030."), said


async def test_free_slots_are_highlighted_among_the_busy_events(
    nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    """find_availability in the host: the free slots of Monday, around the review the view read
    itself with nc_calendar_list_events through the bridge."""
    _put_week(nextcloud)
    arguments = {
        "start": "2026-12-07",
        "end": "2026-12-08",
        "duration_minutes": 60,
        "timezone": "Europe/Berlin",
    }
    with running_app(nextcloud.settings()) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            shown = await host.show("nc_calendar_find_availability", arguments)
            text = await host.view_text("li.slot", containing="Design review")
            slots = await person.browser.run(
                lambda: person.page.frame_locator("#view").locator("li.slot").all_inner_texts()
            )
            await host.screenshot("free slots")
            await _no_csp_violations(person)
    assert shown["result"]["structuredContent"]["slots"] == [
        {"start": "2026-12-07T09:00:00+01:00", "end": "2026-12-07T10:00:00+01:00", "minutes": 60},
        {"start": "2026-12-07T11:30:00+01:00", "end": "2026-12-07T17:00:00+01:00", "minutes": 330},
    ]
    assert [" ".join(s.split()) for s in slots] == [
        f"09:00{TO}10:00 Free (60 min)",
        f"11:30{TO}17:00 Free (330 min)",
    ]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines[:2] == ["Free time", "2 free slots · 1 event · times in Europe/Berlin"], lines
    assert lines.index(f"09:00{TO}10:00") < lines.index("Design review") < lines.index(f"11:30{TO}17:00")


async def test_the_approval_preview_shows_the_folder_about_to_be_deleted(
    nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    """nc_webdav_delete_resource in the host: while the approval question waits, the view lists
    the folder's real entries (read with nc_webdav_list_directory); declined, nothing is gone and
    the view says so."""
    admin = nextcloud.admin
    nextcloud.make_folder(admin, "Project Apollo/drafts")
    nextcloud.put_file(admin, "Project Apollo/plan.md", b"# Plan\n")
    nextcloud.put_file(admin, "Project Apollo/budget.ods", b"x" * 2048)
    with running_app(nextcloud.settings()) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            await host.start("nc_webdav_delete_resource", {"path": "Project Apollo"})
            [question] = await host.asked()
            text = await host.view_text("table.entries", containing="plan.md")
            await host.screenshot("approval preview")
            assert nextcloud.exists(admin, "Project Apollo/plan.md")
            await host.answer("decline")
            await host.finished("nc_webdav_delete_resource")
            after = await host.view_text("p.outcome", containing="Not done")
            await host.screenshot("declined")
            await _no_csp_violations(person)
    assert question.startswith("Delete the folder /Project Apollo with 3 item(s) directly inside"), question
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    assert lines[:2] == [
        "Delete the folder 'Project Apollo'?",
        "The folder /Project Apollo with 3 items directly inside",
    ], lines
    # the person's format (the host says en-US, UTC), the zone named once under the list
    assert all(
        re.search(r"[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M$", line) for line in lines[2:5]
    ), lines
    assert lines[5:] == ["Times in UTC"], lines
    names = [line.split(" ")[0] for line in lines[2:5]]
    assert names == ["drafts/", "budget.ods", "plan.md"], lines
    assert "2.0 KB" in text
    assert "7 bytes" in text
    assert "Not done: the user declined" in after
    assert nextcloud.exists(admin, "Project Apollo/plan.md")


async def test_the_approval_preview_shows_a_notes_text_and_a_links_target(
    nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    """Deleting a note: its text beside the question (markup shown as text). Publishing a link:
    who gets what, until when, and the folder's entries; the link's password is never drawn.
    Both declined: the note and the folder stay, no share exists."""
    admin = nextcloud.admin
    text = "Passport\nTickets <b>not bold</b>\n"
    note = nextcloud.add_note(title="Trip", content=text, category="Travel")
    nextcloud.make_folder(admin, "Photos/2026")
    nextcloud.put_file(admin, "Photos/beach.jpg", b"\xff\xd8" + b"j" * 100)
    link = {"path": "Photos", "kind": "link", "password": "Sunny-Beach-2026!", "expire_date": "2027-01-31"}
    with running_app(nextcloud.settings()) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            await host.start("nc_notes_delete_note", {"note_id": note["id"]})
            [question] = await host.asked()
            shown_note = await host.view_text("pre.content", containing="Passport")
            markup = await host.view_html()
            await host.screenshot("note preview")
            await host.answer("decline")
            await host.finished("nc_notes_delete_note")
            await host.start("nc_share_create", link)
            questions = await host.asked(2)
            shown_link = await host.view_text("table.entries", containing="beach.jpg")
            link_markup = await host.view_html()
            await host.screenshot("public link preview")
            await host.answer("decline")
            await host.finished("nc_share_create")
            await _no_csp_violations(person)
    assert "Trip" in question
    lines = [line.strip() for line in shown_note.splitlines() if line.strip()]
    assert lines[:2] == ["Delete the note 'Trip'?", "Category\tTravel"], lines
    assert re.fullmatch(r"Last changed\t[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M", lines[2]), lines
    assert lines[3:] == ["Passport", "Tickets <b>not bold</b>", "Times in UTC"], lines
    assert "<b>" not in markup.split("<pre", 1)[1].split("</pre>", 1)[0]  # escaped, not markup
    shared = "Share the folder /Photos with anyone with the link and its password"
    assert questions[1].startswith(shared), questions
    rows = [" ".join(line.split()) for line in shown_link.splitlines() if line.strip()]
    assert rows[:6] == [
        "Share the folder 'Photos' with a public link?",
        "Who Anyone with the link",
        "Rights can read",
        "Password set",
        "Until Jan 31, 2027",
        "The folder /Photos with 2 items directly inside",
    ], rows
    assert [row.split(" ")[0] for row in rows[6:8]] == ["2026/", "beach.jpg"]
    assert "Sunny-Beach-2026!" not in link_markup
    assert [n["id"] for n in nextcloud.notes()] == [note["id"]]
    assert nextcloud.shares() == []
