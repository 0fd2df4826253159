"""Nextcloud under a sub-path behind a reverse proxy (`/nextcloud`, with Nextcloud's
`overwritewebroot`), a set-up people report trouble with in other Nextcloud MCP servers (issue 27):
every toolset, and `check`, against both real Nextclouds through a real nginx."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.diagnostics import run_checks
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_proxy import SUBPATH, behind_a_subpath

pytestmark = pytest.mark.integration


async def test_every_toolset_works_under_a_subpath(each_real_nextcloud: Nextcloud) -> None:
    nextcloud = each_real_nextcloud
    assert nextcloud.instance is not None
    with behind_a_subpath(nextcloud.instance) as outside:
        settings = nextcloud.settings(nextcloud_host=outside)
        checks = {c.name: c.status for c in await run_checks(settings)}
        with running_app(settings) as url:
            async with http_session(url + "/mcp") as session:
                note = structured(
                    await session.call_tool("nc_notes_create_note", {"title": "Sub", "content": "x"})
                )
                got = structured(await session.call_tool("nc_notes_get_note", {"note_id": note["id"]}))
                structured(
                    await session.call_tool(
                        "nc_webdav_write_file",
                        {"path": "Sub/deep.txt", "content": "hi", "create_parents": True},
                    )
                )
                listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Sub"}))
                read = await session.call_tool("nc_webdav_read_file", {"path": "Sub/deep.txt"})
                calendars = structured(await session.call_tool("nc_calendar_list_calendars", {}))
                event = structured(
                    await session.call_tool(
                        "nc_calendar_create_event", {"summary": "Meet", "start": "2026-12-03T10:00:00"}
                    )
                )
                events = structured(
                    await session.call_tool(
                        "nc_calendar_list_events", {"start": "2026-12-03", "end": "2026-12-04"}
                    )
                )
                contact = structured(
                    await session.call_tool("nc_contacts_create_contact", {"full_name": "Dora Kiwi"})
                )
                found = structured(await session.call_tool("nc_contacts_search", {"query": "Dora"}))
    assert set(checks.values()) <= {"ok", "warn"}, checks
    assert got["content"] == "x"
    assert [e["name"] for e in listed["entries"]] == ["deep.txt"]
    assert read.content[1].text == "hi"  # type: ignore[union-attr]
    assert calendars["calendars"][0]["id"] == "personal"
    assert event["calendar"] == "personal"
    assert [e["summary"] for e in events["events"]] == ["Meet"]
    assert contact["full_name"] == "Dora Kiwi"
    assert [c["full_name"] for c in found["contacts"]] == ["Dora Kiwi"]
    assert nextcloud.read_file(nextcloud.admin, "Sub/deep.txt") == b"hi"
    assert SUBPATH == "/nextcloud"
