"""The approval race suite (see test_approval_races.py) for contacts, tasks, events and notes:
another device edits the item while the person is asked whether to delete it, or to accept an
update that removes part of it; the approval covers only the version shown, so nothing is
deleted or overwritten and the other device's edit is kept. CardDAV and CalDAV bind a write to
Nextcloud's own ETag (a hash of the stored data), so the real Nextcloud 29 and 34 show the race
as it happens; the double runs it too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app
from tests.toolsets.calendar.test_calendar_tools import mkcalendar

NOTES = "/index.php/apps/notes/api/v1/notes"
LONG = "Bring the signed contract and the bank details and the spare key for the flat on Rue Lamarck."


def _card(note: str) -> str:
    return (
        "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\n"
        f"EMAIL;TYPE=work:kim@example.org\nNOTE:{note}\nEND:VCARD\n"
    )


def _ics(component: str, summary: str) -> str:
    when = (
        "DUE:20261204T090000Z" if component == "VTODO" else "DTSTART:20261204T090000Z\nDTEND:20261204T093000Z"
    )
    return (
        f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//phone//EN\nBEGIN:{component}\nUID:item-1\n"
        f"DTSTAMP:20261101T080000Z\n{when}\nSUMMARY:{summary}\nDESCRIPTION:{LONG}\n"
        f"END:{component}\nEND:VCALENDAR\n"
    ).replace("\n", "\r\n")


def _etag(nc: Nextcloud, href: str) -> str:
    with nc.http(nc.admin) as client:
        got = client.get(href)
    assert got.status_code == 200, got.status_code
    return got.headers["etag"].removeprefix("W/").strip('"')


def _read(nc: Nextcloud, href: str) -> str | None:
    with nc.http(nc.admin) as client:
        got = client.get(href)
    return None if got.status_code == 404 else got.text.replace("\r\n ", "")


@dataclass
class Item:
    href: str
    edit: Callable[[], None]  # another device changes it


def _contact(nc: Nextcloud) -> Item:
    nc.put_card(nc.admin, "kim.vcf", _card("first met in Lyon"))
    return Item(
        nc.card_url(nc.admin, "kim.vcf"), lambda: nc.put_card(nc.admin, "kim.vcf", _card("moved to Oslo"))
    )


def _calendar_item(nc: Nextcloud, component: str) -> Item:
    calendar = "personal"
    if component == "VTODO":
        calendar = "tasks"
        mkcalendar(nc, calendar, "Tasks", "VTODO")
    nc.put_calendar_object(nc.admin, "item-1", _ics(component, "Dentist"), calendar=calendar)

    def edit() -> None:
        nc.put_calendar_object(nc.admin, "item-1", _ics(component, "Dentist (moved)"), calendar=calendar)

    return Item(nc.calendar_path(nc.admin, calendar) + "item-1.ics", edit)


def _note(nc: Nextcloud) -> Item:
    note_id = nc.add_note(title="Flat", content=LONG, category="Home")["id"]

    def edit() -> None:
        with nc.http() as client:
            assert client.put(
                f"{NOTES}/{note_id}", json={"content": LONG + " And the alarm code."}
            ).is_success

    return Item(f"{NOTES}/{note_id}", edit)


# tool, how to make the item, the arguments (given the item's current etag)
CASES: dict[str, tuple[str, Callable[[Nextcloud], Item], Callable[[str], dict[str, Any]]]] = {
    "contact deleted": ("nc_contacts_delete_contact", _contact, lambda etag: {"uid": "kim-1"}),
    "contact emptied": (
        "nc_contacts_update_contact",
        _contact,
        lambda etag: {"uid": "kim-1", "etag": etag, "emails": []},
    ),
    "task deleted": (
        "nc_calendar_delete_todo",
        lambda nc: _calendar_item(nc, "VTODO"),
        lambda etag: {"calendar": "tasks", "uid": "item-1"},
    ),
    "task emptied": (
        "nc_calendar_update_todo",
        lambda nc: _calendar_item(nc, "VTODO"),
        lambda etag: {"calendar": "tasks", "uid": "item-1", "etag": etag, "description": ""},
    ),
    "event deleted": (
        "nc_calendar_delete_event",
        lambda nc: _calendar_item(nc, "VEVENT"),
        lambda etag: {"calendar": "personal", "uid": "item-1"},
    ),
    "event emptied": (
        "nc_calendar_update_event",
        lambda nc: _calendar_item(nc, "VEVENT"),
        lambda etag: {"calendar": "personal", "uid": "item-1", "etag": etag, "description": ""},
    ),
    "note emptied": (
        "nc_notes_update_note",
        _note,
        lambda etag: {"note_id": 0, "etag": etag, "content": "x"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_an_item_edited_elsewhere_while_asked_is_neither_deleted_nor_overwritten(
    nextcloud: Nextcloud, case: str
) -> None:
    nc = nextcloud
    tool, make, arguments = CASES[case]
    item = make(nc)
    if tool == "nc_notes_update_note":
        note = next(n for n in nc.notes() if n["title"] == "Flat")
        args = {**arguments(str(note["etag"])), "note_id": note["id"]}
    else:
        args = arguments(_etag(nc, item.href))
    before = _read(nc, item.href)

    async def edit_elsewhere() -> None:
        item.edit()

    human = Human(while_asked=edit_elsewhere)
    with running_app(nc.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            result = await session.call_tool(tool, args)
    assert len(human.questions) == 1, (result.content, human.questions)
    assert result.is_error, result.structured_content
    assert "changed while you were being asked" in " ".join(getattr(b, "text", "") for b in result.content)
    after = _read(nc, item.href)
    assert after is not None
    assert after != before  # the other device's version, kept whole
    assert any(word in after for word in ("Oslo", "moved", "alarm code")), after
