"""The worst a Nextcloud can hand a view (against the double, with Chromium): names and titles
that are markup, a file name with a right-to-left override, a folder of more entries than the
preview lists, a note longer than it draws, an event title of thousands of characters. Everything
is shown as text, bounded, and says what it left out; nothing runs."""

from __future__ import annotations

import httpx
import pytest

from nextcloud_mcp_server.config import Settings
from tests.apps_host import AppsHost
from tests.browser import Browser, Screenshots
from tests.conftest import ADMIN_APP_PASSWORD
from tests.mcp_clients import running_app

pytestmark = [pytest.mark.integration, pytest.mark.browser]

HOSTILE = '"><img src=x onerror="parent.hacked=1">'
FILES = 205  # more than the 200 entries the preview lists
OVERRIDE = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "\u202egpj.txt" would be drawn as "txt.jpg"


def _seed(url: str) -> int:
    """The folder, a long note and an event with a long title in markup; the note's id."""
    with httpx.Client(base_url=url, auth=("admin", ADMIN_APP_PASSWORD), timeout=30) as nc:
        dav = "/remote.php/dav/files/admin/Big"
        assert nc.request("MKCOL", dav).status_code == 201
        for i in range(FILES - 1):
            assert nc.put(f"{dav}/f{i:03}.txt", content=b"x").status_code == 201
        assert nc.put(f"{dav}/{HOSTILE.replace('/', '')}{OVERRIDE}gpj.txt", content=b"x").status_code == 201
        note = nc.post(
            "/index.php/apps/notes/api/v1/notes",
            json={"title": "Long", "content": HOSTILE + "a" * 50_000},
        )
        assert note.status_code == 200
        summary = HOSTILE + "b" * 5_000
        ics = (
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//T//EN\r\nBEGIN:VEVENT\r\nUID:x\r\n"
            "DTSTAMP:20261101T000000Z\r\nDTSTART:20261207T090000Z\r\nDTEND:20261207T100000Z\r\n"
            f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        )
        put = nc.put("/remote.php/dav/calendars/admin/personal/x.ics", content=ics.encode())
        assert put.status_code == 201
        return int(note.json()["id"])


async def test_markup_and_sizes_stay_text_and_bounded(
    settings: Settings, double_url: str, browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    note_id = _seed(double_url)
    with running_app(settings) as base:
        async with browser.person("admin", screenshots) as person:
            host, _ = await AppsHost.open(person, base, host_script)

            def count(selector: str) -> int:
                return int(person.page.frame_locator("#view").locator(selector).count())

            await host.start("nc_webdav_delete_resource", {"path": "Big"})
            await host.asked()
            folder = await host.view_text("table.entries", containing="…and 5 more")
            rows, images = await person.browser.run(count, "tr.entry"), await person.browser.run(count, "img")
            await host.screenshot("big folder")
            await host.answer("decline")
            await host.finished("nc_webdav_delete_resource")

            await host.start("nc_notes_delete_note", {"note_id": note_id})
            await host.asked(2)
            note = await host.view_text("pre.content", containing="the note goes on")
            pre = await person.browser.run(
                lambda: person.page.frame_locator("#view").locator("pre.content").inner_text()
            )
            await host.screenshot("long note")
            await host.answer("decline")
            await host.finished("nc_notes_delete_note")

            shown = await host.show("nc_calendar_list_events", {"start": "2026-12-07", "end": "2026-12-08"})
            agenda = await host.view_text("li.event")
            what = await person.browser.run(
                lambda: person.page.frame_locator("#view").locator("li.event .what").inner_text()
            )
            await host.screenshot("long title")
            hacked = await host.evaluate("() => window.hacked === undefined")
            blocked = [line for line in person.console if "Content Security Policy" in line]
    assert rows == 200
    assert images == 0
    assert "The folder /Big with 205 items directly inside" in folder
    assert HOSTILE.replace("/", "") + "⟦U+202E⟧gpj.txt" in folder  # the name, as text, the override named
    assert OVERRIDE not in folder
    assert pre.startswith(HOSTILE)
    whole = len(HOSTILE) + 50_000
    assert f"\n⟦… characters 19001 to {whole - 1000} are not shown here …⟧\n" in pre  # start and end shown
    assert pre.endswith("a" * 1_000)
    assert len(pre) < 20_100
    assert f"the note goes on ({len(HOSTILE) + 50_000} characters in all)" in note
    assert len(shown["result"]["structuredContent"]["events"][0]["summary"]) == len(HOSTILE) + 5_000
    assert what == (HOSTILE + "b" * 5_000)[:300]
    assert "Agenda" in agenda
    assert hacked
    assert not blocked, blocked
