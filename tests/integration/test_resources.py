"""Resources over MCP (docs/ADR/0039-resources.md), through the SDK's own client, against the
double, the real Nextcloud 29 and the real 34: templates, a paged listing, a note, text and
binary files and one too large to send, a calendar day and week with real events, a contact's
vCard, and clear errors for URIs that name nothing (or something outside the user's data)."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import ClientSession, MCPError
from mcp.types import BlobResourceContents, PaginatedRequestParams, TextResourceContents

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.resources import KINDS, file_uri
from nextcloud_mcp_server.resources._listing import MAX_NOTES, PAGE_SIZE
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, stdio_session
from tests.nextcloud_double import NextcloudDouble

pytestmark = pytest.mark.integration

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CAP = 4096  # FILES_MAX_READ_BYTES for these tests


@asynccontextmanager
async def _session(nextcloud: Nextcloud, **overrides: Any) -> AsyncIterator[ClientSession]:
    with running_app(nextcloud.settings(files_max_read_bytes=CAP, **overrides)) as base:
        async with http_session(f"{base}/mcp") as session:
            yield session


async def _one(session: ClientSession, uri: str) -> TextResourceContents | BlobResourceContents:
    read = await session.read_resource(uri)
    [contents] = read.contents
    assert contents.uri == uri
    return contents


async def _refused(session: ClientSession, uri: str) -> tuple[int, str]:
    with pytest.raises(MCPError) as raised:
        await session.read_resource(uri)
    return raised.value.code, raised.value.error.message


async def test_templates_and_a_listing_read_in_pages(nextcloud: Nextcloud) -> None:
    """Four templates; today, this week and every note, each once, over two pages of at most 20;
    a cursor this server did not give out is refused."""
    before = {note["id"] for note in nextcloud.notes()}
    made = {nextcloud.add_note(title=f"Paging {n:02d}", content=f"n {n}")["id"] for n in range(25)}
    async with _session(nextcloud) as session:
        templates = (await session.list_resource_templates()).resource_templates
        first = await session.list_resources()
        assert first.next_cursor is not None
        second = await session.list_resources(params=PaginatedRequestParams(cursor=first.next_cursor))
        with pytest.raises(MCPError) as raised:
            await session.list_resources(params=PaginatedRequestParams(cursor="b2Zmc2V0OjQw"))
    assert {(t.uri_template, t.mime_type) for t in templates} == {
        ("nextcloud://notes/{id}", "text/markdown"),
        ("nextcloud://files/{+path}", None),
        ("nextcloud://calendar/{date}", "application/json"),
        ("nextcloud://calendars/{calendar}/{date}", "application/json"),
        ("nextcloud://contacts/{addressbook}/{uid}", "text/vcard"),
    }
    # the views (ui://, registered with the SDK) come first on page one only, then 20 of ours
    views = [str(r.uri) for r in first.resources if str(r.uri).startswith("ui://")]
    assert views == ["ui://nextcloud/agenda.html", "ui://nextcloud/approval.html"]
    assert not [r for r in second.resources if str(r.uri).startswith("ui://")]
    assert len(first.resources) == len(views) + 20
    assert second.next_cursor is None
    uris = [str(r.uri) for r in [*first.resources, *second.resources] if str(r.uri).startswith("nextcloud:")]
    assert len(uris) == len(set(uris)) == 2 + len(before | made)
    assert uris[0].startswith("nextcloud://calendar/20")
    assert "-W" in uris[1]
    assert {f"nextcloud://notes/{i}" for i in made} <= set(uris)
    listed = {str(r.uri): r for r in first.resources}
    newest = max(made)
    assert listed[f"nextcloud://notes/{newest}"].title == "Paging 24"
    assert raised.value.code == -32602
    assert "cursor was not given out by this server" in raised.value.error.message


async def test_a_note_reads_as_markdown_with_its_title(nextcloud: Nextcloud) -> None:
    """At the lowest permission level too: resources only read."""
    plain = nextcloud.add_note(title="Groceries", content="- oat milk\n- bread", category="Home")
    headed = nextcloud.add_note(title="Plan", content="# Plan\n\nShip it.")
    async with _session(nextcloud, nextcloud_mcp_permissions="read") as session:
        assert "nc_notes_create_note" not in {t.name for t in (await session.list_tools()).tools}
        assert len((await session.list_resource_templates()).resource_templates) == len(KINDS)
        first = await _one(session, f"nextcloud://notes/{plain['id']}")
        second = await _one(session, f"nextcloud://notes/{headed['id']}")
        code, message = await _refused(session, "nextcloud://notes/987654")
    assert isinstance(first, TextResourceContents)
    assert first.mime_type == "text/markdown"
    assert first.text.startswith("# Groceries\n\n")
    assert first.text.endswith("- oat milk\n- bread")
    assert (first.meta or {})["nextcloud-mcp/category"] == "Home"
    assert isinstance(second, TextResourceContents)
    assert second.text == "# Plan\n\nShip it."  # its first line is its title already: not twice
    assert code == -32602
    assert message.startswith("resource not found:")
    assert "987654" in message


async def test_files_text_inline_binary_as_blob_and_too_large_described(nextcloud: Nextcloud) -> None:
    admin = nextcloud.admin
    name = "Docs/plan é#?.md"
    nextcloud.put_file(admin, name, "# Plan\nnaïve\n".encode(), content_type="text/markdown")
    nextcloud.put_file(admin, "Docs/dot.png", PNG, content_type="image/png")
    nextcloud.put_file(admin, "Docs/exact.bin", b"\x00" * CAP, content_type="application/octet-stream")
    nextcloud.put_file(
        admin, "Docs/large.png", PNG + b"\x01" * (CAP + 1 - len(PNG)), content_type="image/png"
    )
    nextcloud.put_file(admin, "Docs/long.txt", b"a" * (3 * CAP), content_type="text/plain")
    async with _session(nextcloud) as session:
        text = await _one(session, file_uri(name))
        image = await _one(session, file_uri("Docs/dot.png"))
        exact = await _one(session, file_uri("Docs/exact.bin"))
        large = await _one(session, file_uri("Docs/large.png"))
        long = await _one(session, file_uri("Docs/long.txt"))
        folder = await _refused(session, "nextcloud://files/Docs")
        missing = await _refused(session, "nextcloud://files/Docs/none.txt")
    assert file_uri(name) == "nextcloud://files/Docs/plan%20%C3%A9%23%3F.md"
    assert isinstance(text, TextResourceContents)
    assert text.text == "# Plan\nnaïve\n"
    assert text.mime_type.startswith("text/markdown")
    assert isinstance(image, BlobResourceContents)
    assert (image.mime_type, base64.b64decode(image.blob)) == ("image/png", PNG)
    assert isinstance(exact, BlobResourceContents)
    assert len(base64.b64decode(exact.blob)) == CAP  # the limit itself is sent
    for described, size, mime in (
        (large, CAP + 1, "image/png"),
        (long, 3 * CAP, "text/plain"),
    ):
        assert isinstance(described, TextResourceContents)
        assert described.mime_type == "text/plain"
        assert f"{size} bytes" in described.text
        assert mime in described.text
        assert "Not sent" in described.text
        assert "\x01" not in described.text
        assert "a" * 100 not in described.text
        info = (described.meta or {})["nextcloud-mcp/file"]
        assert (info["size"], info["sent"]) == (size, False)
    assert folder[0] == -32602
    assert "is a folder" in folder[1]
    assert missing[0] == -32602
    assert "resource not found" in missing[1]


WEEK_EVENTS = {
    "dentist": ("DTSTART:20261126T100000Z\nDTEND:20261126T110000Z", "Dentist"),
    "trip": ("DTSTART;VALUE=DATE:20261128\nDTEND;VALUE=DATE:20261130", "Trip"),
    "standup": ("DTSTART:20261102T090000Z\nDTEND:20261102T091500Z\nRRULE:FREQ=WEEKLY;BYDAY=MO", "Standup"),
    "later": ("DTSTART:20261201T100000Z\nDTEND:20261201T110000Z", "Next month"),
}


def _event(uid: str, times: str, summary: str) -> str:
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Test//EN\nBEGIN:VEVENT\n"
        f"UID:{uid}\nDTSTAMP:20261101T000000Z\n{times}\nSUMMARY:{summary}\nEND:VEVENT\nEND:VCALENDAR\n"
    ).replace("\n", "\r\n")


async def test_a_calendar_day_and_an_iso_week_with_real_events(nextcloud: Nextcloud) -> None:
    for uid, (times, summary) in WEEK_EVENTS.items():
        nextcloud.put_calendar_object(nextcloud.admin, uid, _event(uid, times, summary))
    async with _session(nextcloud) as session:
        day = await _one(session, "nextcloud://calendar/2026-11-26")
        week = await _one(session, "nextcloud://calendar/2026-W48")
        empty = await _one(session, "nextcloud://calendar/2026-11-27")
    assert isinstance(day, TextResourceContents)
    assert day.mime_type == "application/json"
    assert isinstance(week, TextResourceContents)
    assert isinstance(empty, TextResourceContents)
    one, seven, none = json.loads(day.text), json.loads(week.text), json.loads(empty.text)
    assert [e["summary"] for e in one["events"]] == ["Dentist"]
    assert one["events"][0]["start"] == "2026-11-26T10:00:00+00:00"
    assert (one["span"], one["first_day"], one["last_day"]) == ("day", "2026-11-26", "2026-11-26")
    assert [e["summary"] for e in seven["events"]] == ["Standup", "Dentist", "Trip"]
    assert seven["events"][0]["start"] == "2026-11-23T09:00:00+00:00"  # the occurrence, expanded
    assert (seven["first_day"], seven["last_day"], seven["timezone"]) == ("2026-11-23", "2026-11-29", "UTC")
    assert seven["truncated"] is False
    assert none["events"] == []


async def test_one_calendars_week_holds_only_its_events(nextcloud: Nextcloud) -> None:
    """`nextcloud://calendars/{calendar}/{date}`: the same answer, for the named calendar alone."""
    nextcloud.make_calendar("work-2026", "Work")
    for uid, (times, summary) in WEEK_EVENTS.items():
        nextcloud.put_calendar_object(nextcloud.admin, uid, _event(uid, times, summary))
    nextcloud.put_calendar_object(
        nextcloud.admin,
        "review",
        _event("review", "DTSTART:20261125T140000Z\nDTEND:20261125T150000Z", "Review"),
        calendar="work-2026",
    )
    async with _session(nextcloud) as session:
        work = await _one(session, "nextcloud://calendars/work-2026/2026-W48")
        personal = await _one(session, "nextcloud://calendars/personal/2026-W48")
        both = await _one(session, "nextcloud://calendar/2026-W48")
    assert isinstance(work, TextResourceContents)
    assert isinstance(personal, TextResourceContents)
    assert isinstance(both, TextResourceContents)
    assert [e["summary"] for e in json.loads(work.text)["events"]] == ["Review"]
    assert json.loads(work.text)["calendar"] == "work-2026"
    assert [e["summary"] for e in json.loads(personal.text)["events"]] == ["Standup", "Dentist", "Trip"]
    assert [e["summary"] for e in json.loads(both.text)["events"]] == ["Standup", "Review", "Dentist", "Trip"]


async def test_a_contact_reads_as_its_vcard(nextcloud: Nextcloud) -> None:
    nextcloud.put_card(
        nextcloud.admin,
        "ada-1.vcf",
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada-1\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n",
    )
    nextcloud.put_card(
        nextcloud.admin,
        "phone-7.vcf",
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:grace-2\r\nFN:Grace Hopper\r\nEND:VCARD\r\n",
    )
    async with _session(nextcloud) as session:
        ada = await _one(session, "nextcloud://contacts/contacts/ada-1")
        grace = await _one(session, "nextcloud://contacts/contacts/grace-2")  # not at <uid>.vcf
        nobody = await _refused(session, "nextcloud://contacts/contacts/nobody-9")
        no_book = await _refused(session, "nextcloud://contacts/nobook/ada-1")
    assert isinstance(ada, TextResourceContents)
    assert isinstance(grace, TextResourceContents)
    assert ada.mime_type == "text/vcard"
    assert "FN:Ada Lovelace" in ada.text
    assert ada.text.lstrip().startswith("BEGIN:VCARD")
    assert (ada.meta or {})["nextcloud-mcp/etag"]
    assert "FN:Grace Hopper" in grace.text
    assert nobody[0] == -32602
    assert "resource not found" in nobody[1]
    assert "nobody-9" in nobody[1]
    assert no_book[0] == -32602
    assert "no address book 'nobook'" in no_book[1]


BAD_URIS = [
    ("nextcloud://files/../alice/files/secret.txt", "'.' or '..' segments"),
    ("nextcloud://files/Docs/%2e%2e/%2E%2E/alice", "'.' or '..' segments"),
    ("nextcloud://files/Docs%2F..%2F..%2Falice", "'.' or '..' segments"),
    ("nextcloud://files/a%5Cb", "'/' as separator"),
    ("nextcloud://files/", "name a file"),
    ("nextcloud://notes/abc", "a note id is a whole number"),
    ("nextcloud://notes/0", "a note id is a whole number"),
    ("nextcloud://notes/99999999999999999999", "a note id is a whole number"),
    ("nextcloud://calendar/2026-02-30", "is not a day like 2026-11-26"),
    ("nextcloud://calendar/2026-W54", "is not a day like 2026-11-26"),
    ("nextcloud://calendar/9999-12-31", "is not a day like 2026-11-26"),
    ("nextcloud://calendar/tomorrow", "is not a day like 2026-11-26"),
    ("nextcloud://calendars/personal/tomorrow", "is not a day like 2026-11-26"),
    ("nextcloud://calendars/no-such-calendar/2026-11-26", "no calendar 'no-such-calendar'"),
    ("nextcloud://contacts/..%2F..%2Falice%2Fcontacts/x", "no address book"),
    ("nextcloud://contacts/contacts/" + "u" * 201, "1 to 200 characters"),
    ("nextcloud://tasks/1", "unknown resource"),
    ("nextcloud://files/" + "a/" * 4100, "longer than 8192 characters"),
]


async def test_uris_that_name_nothing_get_one_clear_error_each(nextcloud: Nextcloud) -> None:
    nextcloud.put_file(nextcloud.alice, "secret.txt", b"alice only")
    async with _session(nextcloud) as session:
        answers = [(uri, *await _refused(session, uri)) for uri in [u for u, _ in BAD_URIS]]
    for (uri, code, message), (_, expected) in zip(answers, BAD_URIS, strict=True):
        assert code == -32602, (uri, code, message)
        assert expected in message, (uri, message)
        assert "alice only" not in message
        assert "Traceback" not in message


async def test_a_resource_read_over_stdio(nextcloud: Nextcloud) -> None:
    note = nextcloud.add_note(title="Over stdio", content="piped")
    async with stdio_session(nextcloud.server_env()) as session:
        read = await session.read_resource(f"nextcloud://notes/{note['id']}")
        templates = await session.list_resource_templates()
    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == "# Over stdio\n\npiped"
    assert len(templates.resource_templates) == len(KINDS) == 5


async def test_the_listing_holds_at_most_the_newest_hundred_notes(
    double: NextcloudDouble, settings: Settings
) -> None:
    """Bounded whatever the number of notes (the double only: 105 notes are quick to make there):
    the 100 most recently changed, newest first, and the cursor ends."""
    made = [
        double.notes.create("admin", {"title": f"Bound {n:03d}", "content": "x"})["id"]
        for n in range(MAX_NOTES + 5)
    ]
    pages: list[list[str]] = []
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            cursor = None
            while len(pages) < 10:
                page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
                pages.append([str(r.uri) for r in page.resources])
                cursor = page.next_cursor
                if cursor is None:
                    break
    notes = [uri for page in pages for uri in page if uri.startswith("nextcloud://notes/")]
    assert len(pages) == -(-(MAX_NOTES + 2) // PAGE_SIZE)
    assert len(notes) == MAX_NOTES
    assert notes[0] == f"nextcloud://notes/{made[-1]}"  # newest first
    assert set(notes) == {f"nextcloud://notes/{i}" for i in made[-MAX_NOTES:]}  # the 5 oldest left out
