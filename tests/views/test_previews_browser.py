"""Every question the server asks a person, with its preview rendered in Chromium in the test host
(one browser, one page, one view after another) against the real Nextcloud 34 with its apps (and
real IMAP and SMTP servers for Mail; hostile values per family in tests/views/preview_records.py): the
heading names the thing ("Delete the card 'Budget'?"), times are the person's (told en-GB and
Europe/Berlin by the host: "4 Dec 2026, 10:00", the zone named once), nothing wraps badly at
360 px, and every question is declined: nothing is deleted, posted, shared or replaced.
tests/views/test_every_question.py checks that CASES names every tool that asks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apps_host import AppsHost
from tests.backends import Nextcloud
from tests.browser import Browser, Screenshots
from tests.mail_servers import mail_servers
from tests.mcp_clients import http_session, running_app, structured
from tests.security.test_publishing import DECK, ROOM, SHARES, ocs
from tests.toolsets.collectives.collectives_api import collective
from tests.toolsets.tables.tables_api import add, make_trip
from tests.views import preview_records as records
from tests.views.test_views_browser import _event

pytestmark = [pytest.mark.integration, pytest.mark.browser]

TOOLSETS = (
    "notes,calendar,contacts,dav_collections,files,sharing,trash,versions,comments,tags,deck,talk,tables,collectives,"
    "cookbook,bookmarks,polls,mail,notifications,status"
)
WIDTH = 360  # a phone's width: the views must stay readable there

# tool -> the heading its preview must show ({row}: the seeded row's id, {page_title}: the
# collective's landing page, named by the app's version)
CASES: dict[str, str] = {
    "nc_notes_delete_note": "Delete the note 'Trip'?",
    "nc_notes_update_note": "Change the note 'Trip'?",
    "nc_calendar_delete_event": "Delete the event 'Dentist'?",
    "nc_calendar_update_event": "Change the event 'Dentist'?",
    "nc_calendar_delete_todo": "Delete the task 'Renew passport'?",
    "nc_calendar_update_todo": "Change the task 'Renew passport'?",
    "nc_contacts_delete_contact": "Delete the contact 'Kim Lee'?",
    "nc_contacts_update_contact": "Change the contact 'Kim Lee'?",
    "nc_webdav_delete_resource": "Delete the folder 'Projects'?",
    "nc_webdav_write_file": "Replace the file 'plan.md'?",
    "nc_webdav_move_resource": "Move 'draft.md' over the file 'plan.md'?",
    "nc_webdav_copy_resource": "Copy 'draft.md' over the file 'plan.md'?",
    "nc_share_create": "Share the folder 'Projects' with a public link?",
    "nc_share_update": "Change the share of 'Shared' with a public link?",
    "nc_share_delete": "Stop sharing 'Shared' with a public link?",
    "nc_versions_restore": "Restore an older version of the file 'report.txt'?",
    "nc_trash_empty": "Empty the trash: delete 1 item for good?",
    "nc_comments_add": "Comment on 'memo.txt'?",
    "nc_tags_assign": "Create the tag 'layoffs-2027' and put it on 'memo.txt'?",
    "nc_deck_delete_card": "Delete the card 'Budget'?",
    "nc_deck_delete_board": "Delete the board 'Plans' with 1 card?",
    "nc_deck_add_comment": "Comment on the card 'Budget'?",
    "nc_talk_post_message": "Post in 'Open'?",
    "nc_tables_delete_row": "Delete row {row} of the table 'Trip'?",
    "nc_tables_update_row": "Change row {row} of the table 'Trip'?",
    "nc_collectives_edit_page": "Replace the text of the page '{page_title}'?",
    **records.CASES,
}

EVENT = (
    "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//phone//EN\nBEGIN:VEVENT\nUID:dentist\nDTSTAMP:20261101T080000Z\n"
    "DTSTART:20261204T090000Z\nDTEND:20261204T093000Z\nSUMMARY:Dentist\nLOCATION:Rue Lamarck 4\n"
    "END:VEVENT\nEND:VCALENDAR\n"
).replace("\n", "\r\n")
TODO = (
    "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//phone//EN\nBEGIN:VTODO\nUID:passport\nDTSTAMP:20261101T080000Z\n"
    "DUE:20261204T090000Z\nSUMMARY:Renew passport\nDESCRIPTION:Photos and the old passport\n"
    "END:VTODO\nEND:VCALENDAR\n"
).replace("\n", "\r\n")
CARD = (
    "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\nEMAIL:kim@example.org\n"
    "NOTE:met in Lyon\nEND:VCARD\n"
)


def _seed(nc: Nextcloud) -> dict[str, Any]:
    """Alice's things, each as a question about it would find it."""
    alice = nc.alice
    nc.make_folder(alice, "Projects")
    nc.put_file(alice, "Projects/plan.md", b"# Plan\n")
    nc.put_file(alice, "Projects/draft.md", b"# Draft\n")
    nc.put_file(alice, "report.txt", b"first")
    nc.put_new_version(alice, "report.txt", b"second")
    nc.put_file(alice, "gone.txt", b"old")
    with nc.http(alice) as client:
        assert client.delete(nc.dav_path(alice, "gone.txt")).status_code == 204
    nc.make_folder(alice, "Shared")
    nc.put_file(alice, "Shared/memo.txt", b"memo")
    link = ocs(nc, alice, "POST", SHARES, data={"path": "/Shared", "shareType": 3})
    nc.make_calendar("tasks", "Tasks", alice)
    nc.put_calendar_object(alice, "dentist", EVENT)
    review = _event("review", "Design review", "20261204T140000", "20261204T153000", "Room 4")  # Berlin
    nc.put_calendar_object(alice, "review", review)
    nc.put_calendar_object(alice, "passport", TODO, calendar="tasks")
    nc.put_card(alice, "kim.vcf", CARD.replace("\n", "\r\n"))
    note = nc.add_note(alice, title="Trip", content="Passport\nTickets", category="Travel")
    nc.add_group("team", "admin")
    board = ocs(nc, alice, "POST", f"{DECK}/boards", json={"title": "Plans", "color": "0082c9"})["id"]
    stack = ocs(nc, alice, "POST", f"{DECK}/boards/{board}/stacks", json={"title": "To do", "order": 1})["id"]
    card = ocs(
        nc,
        alice,
        "POST",
        f"{DECK}/boards/{board}/stacks/{stack}/cards",
        json={"title": "Budget", "description": records.CARD_TEXT},
    )["id"]
    acl = {
        "type": 1,
        "participant": "team",
        "permissionEdit": True,
        "permissionShare": False,
        "permissionManage": False,
    }
    ocs(nc, alice, "POST", f"{DECK}/boards/{board}/acl", json=acl)
    token = str(ocs(nc, alice, "POST", ROOM, json={"roomType": 2, "roomName": "Open"})["token"])
    ocs(
        nc, alice, "POST", f"{ROOM}/{token}/participants", json={"newParticipant": "admin", "source": "users"}
    )
    ocs(nc, alice, "PUT", f"{ROOM}/{token}/listable", json={"scope": 1})
    ids = make_trip(nc)
    row = add(nc, ids, Name="Porto", Notes="three nights")
    wiki = collective(nc)
    return {
        "note": note["id"],
        "link": str(link["id"]),
        "board": board,
        "stack": stack,
        "card": card,
        "token": token,
        "row": row,
        "table": ids["table"],
        "collective": wiki["id"],
        "page": wiki["landing"]["id"],
        "page_title": wiki["landing"]["title"],
    }


async def _versions(base: str, seeded: dict[str, Any]) -> dict[str, Any]:
    """What a client reads first: the etags and versions the changing tools are given (and the
    records it adds: a recipe, a bookmark, a poll)."""
    async with http_session(f"{base}/mcp") as session:
        seeded.update(await records.add_records(session, seeded["collective"]))

        async def read(tool: str, **arguments: Any) -> dict[str, Any]:
            return structured(await session.call_tool(tool, arguments))

        return {
            "note": (await read("nc_notes_get_note", note_id=seeded["note"]))["etag"],
            "event": (await read("nc_calendar_get_event", calendar="personal", uid="dentist"))["etag"],
            "todo": (await read("nc_calendar_list_todos", calendar="tasks"))["todos"][0]["etag"],
            "contact": (await read("nc_contacts_get_contact", uid="kim-1"))["etag"],
            "row": (await read("nc_tables_read_rows", table_id=seeded["table"]))["rows"][0]["version"],
            "page": (
                await read(
                    "nc_collectives_get_page", collective_id=seeded["collective"], page_id=seeded["page"]
                )
            )["etag"],
            "version": next(
                v["version"]
                for v in (await read("nc_versions_list", path="report.txt"))["versions"]
                if not v["current"]
            ),
        }


def _arguments(tool: str, s: dict[str, Any], v: dict[str, Any]) -> dict[str, Any]:
    """The arguments of each question (changes remove something, so that each one asks)."""
    if tool in records.CASES:
        return records.arguments(tool, s)
    card = {"board_id": s["board"], "stack_id": s["stack"], "card_id": s["card"]}
    return {
        "nc_notes_delete_note": {"note_id": s["note"]},
        "nc_notes_update_note": {"note_id": s["note"], "etag": v["note"], "content": ""},
        "nc_calendar_delete_event": {"calendar": "personal", "uid": "dentist"},
        "nc_calendar_update_event": {
            "calendar": "personal",
            "uid": "dentist",
            "etag": v["event"],
            "location": "",
        },
        "nc_calendar_delete_todo": {"calendar": "tasks", "uid": "passport"},
        "nc_calendar_update_todo": {
            "calendar": "tasks",
            "uid": "passport",
            "etag": v["todo"],
            "description": "",
        },
        "nc_contacts_delete_contact": {"uid": "kim-1"},
        "nc_contacts_update_contact": {"uid": "kim-1", "etag": v["contact"], "emails": []},
        "nc_webdav_delete_resource": {"path": "Projects"},
        "nc_webdav_write_file": {"path": "Projects/plan.md", "content": "# New plan\n", "overwrite": True},
        "nc_webdav_move_resource": {
            "source": "Projects/draft.md",
            "destination": "Projects/plan.md",
            "overwrite": True,
        },
        "nc_webdav_copy_resource": {
            "source": "Projects/draft.md",
            "destination": "Projects/plan.md",
            "overwrite": True,
        },
        "nc_share_create": {"path": "Projects", "kind": "link", "password": "Sunny-Beach-2026!"},
        "nc_share_update": {"share_id": s["link"], "rights": "edit"},
        "nc_share_delete": {"share_id": s["link"]},
        "nc_versions_restore": {"path": "report.txt", "version": v["version"]},
        "nc_trash_empty": {},
        "nc_comments_add": {"path": "Shared/memo.txt", "message": "Final <b>numbers</b>"},
        "nc_tags_assign": {"path": "Shared/memo.txt", "tag": "layoffs-2027", "create": True},
        "nc_deck_delete_card": card,
        "nc_deck_delete_board": {"board_id": s["board"]},
        "nc_deck_add_comment": {"card_id": s["card"], "message": "Numbers by Friday"},
        "nc_talk_post_message": {"token": s["token"], "text": "Lunch at noon?"},
        "nc_tables_delete_row": {"row_id": s["row"]},
        "nc_tables_update_row": {"row_id": s["row"], "version": v["row"], "values": {"Notes": ""}},
        "nc_collectives_edit_page": {
            "collective_id": s["collective"],
            "page_id": s["page"],
            "etag": v["page"],
            "content": "",
        },
    }[tool]


async def _wraps(host: AppsHost, selector: str) -> list[str]:
    """The texts of `selector` in the view that take more than one line (their line boxes)."""

    script = (
        "nodes => nodes.filter(n => { const r = document.createRange(); r.selectNodeContents(n);"
        " return new Set([...r.getClientRects()].map(b => Math.round(b.bottom))).size > 1; })"
        ".map(n => n.textContent)"
    )

    def check() -> list[str]:
        return list(host.person.page.frame_locator("#view").locator(selector).evaluate_all(script))

    return await host.person.browser.run(check)


@pytest.mark.parametrize("apps_nextcloud", ["real34"], indirect=True)
async def test_every_question_has_a_preview_that_names_the_thing(
    apps_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    nc = apps_nextcloud
    seeded = _seed(nc)
    headings: dict[str, str] = {}
    texts: dict[str, str] = {}
    settings = nc.settings(nc.alice, nextcloud_mcp_toolsets=TOOLSETS)
    with mail_servers() as servers, running_app(settings) as base:
        seeded.update(records.seed_apps(nc, servers.account("alice@example.com")))
        versions = await _versions(base, seeded)
        async with browser.person("alice", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)
            await host.as_person("en-GB", "Europe/Berlin", WIDTH)
            for count, tool in enumerate(CASES, start=1):
                await host.start(tool, _arguments(tool, seeded, versions))
                await host.asked(count)
                text = await host.view_text("h1")
                texts[tool] = text
                headings[tool] = text.strip().splitlines()[0]
                assert await _wraps(host, "td.modified, td.size, .zone-note") == [], tool
                if tool in ("nc_webdav_delete_resource", "nc_calendar_delete_event", "nc_mail_send"):
                    await host.screenshot(tool)
                await host.answer("decline")
                await host.finished(tool)
            # the agenda at the same width, events in two zones: one line per title, each zone
            # named once (the other one on its own row, under the title)
            await host.show("nc_calendar_list_events", {"start": "2026-12-04", "end": "2026-12-05"})
            agenda = await host.view_text("section.day", containing="Dentist")
            wrapped = await _wraps(host, ".what, .when")
            await host.screenshot("agenda at 360 px")
            hacked = await host.evaluate("() => window.hacked !== undefined")
        sent = list(servers.received)
    assert not hacked  # markup in every family stayed text
    records.check_texts(texts)
    assert wrapped == [], wrapped
    assert "2 events \u00b7 times in " in agenda, agenda  # the header names one zone
    assert agenda.count("UTC") == 1, agenda
    assert agenda.count("Europe/Berlin") == 1, agenda
    assert "Design review" in agenda, agenda
    expected = {tool: heading.format(**seeded) for tool, heading in CASES.items()}
    assert headings == expected
    # the person's time, in their format, the zone said once (09:00 UTC is 10:00 in Berlin)
    dentist = texts["nc_calendar_delete_event"]
    assert (
        "4 Dec 2026, 10:00\u2009\u2013\u200910:30" in dentist or "4 Dec 2026, 10:00\u201310:30" in dentist
    ), dentist
    assert dentist.count("Europe/Berlin") == 1, dentist
    assert dentist.rstrip().endswith("Times in Europe/Berlin"), dentist
    assert "Rue Lamarck 4" in dentist
    assert "T09:00" not in dentist
    assert "UTC" not in dentist
    folder = texts["nc_webdav_delete_resource"]
    assert "plan.md" in folder, folder
    assert "draft.md" in folder, folder
    assert "UTC" not in folder, folder
    # what is published is shown as text, the link's password never
    assert "Final <b>numbers</b>" in texts["nc_comments_add"]
    assert "Sunny-Beach-2026!" not in texts["nc_share_create"]
    assert "Password\tset" in texts["nc_share_create"] or "Password set" in texts["nc_share_create"]
    assert "Lunch at noon?" in texts["nc_talk_post_message"]
    assert "Porto" in texts["nc_tables_delete_row"]
    # nothing happened: every question was declined
    assert nc.read_file(nc.alice, "Projects/plan.md") == b"# Plan\n"
    assert [n["id"] for n in nc.notes(nc.alice)] == [seeded["note"]]
    assert sent == []
