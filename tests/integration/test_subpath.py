"""Nextcloud under a sub-path behind a reverse proxy (`/nextcloud`, with Nextcloud's
`overwritewebroot`), a set-up people report trouble with in other Nextcloud MCP servers (issue 27):
every toolset, and `check`, against both real Nextclouds through a real nginx."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from nextcloud_mcp_server.diagnostics import run_checks
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_pages import NextcloudPages
from tests.nextcloud_proxy import SUBPATH, behind_a_subpath
from tests.offline import Completions, real_offline_server
from tests.oidc import IdP

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
                notes = structured(await session.call_tool("nc_notes_list_notes", {}))
                hits = structured(await session.call_tool("nc_notes_search_notes", {"query": "Sub"}))
                structured(
                    await session.call_tool(
                        "nc_webdav_write_file",
                        {"path": "Sub/deep.txt", "content": "hi", "create_parents": True},
                    )
                )
                listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Sub"}))
                searched = structured(
                    await session.call_tool(
                        "nc_webdav_search_files", {"name_pattern": "deep*", "path": "Sub"}
                    )
                )
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
    # listed and searched as files under the sub-path (hrefs carry /nextcloud)
    assert [n["id"] for n in notes["notes"]] == [note["id"]]
    assert [h["id"] for h in hits["hits"]] == [note["id"]]
    assert [f["path"] for f in searched["files"]] == ["/Sub/deep.txt"]
    assert [e["name"] for e in listed["entries"]] == ["deep.txt"]
    assert read.content[1].text == "hi"  # type: ignore[union-attr]
    assert calendars["calendars"][0]["id"] == "personal"
    assert event["calendar"] == "personal"
    assert [e["summary"] for e in events["events"]] == ["Meet"]
    assert contact["full_name"] == "Dora Kiwi"
    assert [c["full_name"] for c in found["contacts"]] == ["Dora Kiwi"]
    assert nextcloud.read_file(nextcloud.admin, "Sub/deep.txt") == b"hi"
    assert SUBPATH == "/nextcloud"


@pytest.mark.parametrize("provider", ["nextcloud-oauth2", "login-flow-v2"])
async def test_consent_through_the_pages_under_a_subpath(
    real_nextcloud_34: Nextcloud, idp: IdP, tmp_path: Path, provider: str
) -> None:
    """Progressive consent with Nextcloud's pages under /nextcloud (34, over HTTP)."""
    nextcloud = real_nextcloud_34
    assert nextcloud.instance is not None
    nextcloud.add_note(nextcloud.alice, title="Tulips", content="plant in autumn")
    with (
        behind_a_subpath(nextcloud.instance) as outside,
        real_offline_server(
            nextcloud, idp, tmp_path / "store.sqlite3", provider, nextcloud_host=outside
        ) as server,
    ):
        completions = Completions()
        async with http_session(
            server.mcp,
            headers=server.headers("alice"),
            elicitation_callback=_no_form,
            message_handler=completions.handler,
        ) as session:
            with pytest.raises(MCPError) as raised:
                await session.call_tool("nc_notes_list_notes", {})
            [asked] = raised.value.error.data["elicitations"]
            with NextcloudPages(outside) as pages:
                last = await asyncio.to_thread(pages.follow, asked["url"], "alice", nextcloud.alice.password)
            if provider == "login-flow-v2":  # Nextcloud's own last page
                assert pages.last_state == "done", pages.steps
            else:  # ours, after Nextcloud's redirect to the callback
                assert "Your Nextcloud is connected" in last.text, pages.steps
            with anyio.fail_after(30):
                await completions.event(asked["elicitationId"]).wait()
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Tulips"], pages.steps
    # every page Nextcloud sent the person to was under the sub-path, on the proxy's address
    origin = outside.removesuffix(SUBPATH)
    visited = [word for step in pages.steps for word in step.split() if word.startswith("http")]
    on_nextcloud = [url for url in visited if url.startswith(origin)]
    assert len(on_nextcloud) >= 2, pages.steps
    assert all(url.startswith(f"{outside}/") for url in on_nextcloud), pages.steps


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")
