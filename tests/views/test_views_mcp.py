"""What the server offers MCP Apps hosts, through the SDK's client against the double and the real
Nextclouds: the tools link their `ui://` view in `_meta`, the views are resources of the MCP Apps
MIME type with an empty CSP, and a client without UI support gets exactly the results a client
with it gets (the views change nothing in what a tool answers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from nextcloud_mcp_server.views import AGENDA, APPROVAL, MIME_TYPE, VIEWS, html
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app
from tests.views.test_every_question import asking_tools

pytestmark = pytest.mark.integration

UI = {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME_TYPE]}}
# the tools offered by default that link a view: the agenda's two, and every one that asks
LINKED = {
    "nc_calendar_list_events": AGENDA,
    "nc_calendar_find_availability": AGENDA,
    **{name: APPROVAL for name in asking_tools()},
}
EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Phone//EN\r\nBEGIN:VEVENT\r\nUID:standup\r\n"
    "DTSTAMP:20261101T000000Z\r\nDTSTART:20261207T090000Z\r\nDTEND:20261207T093000Z\r\n"
    "SUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


@pytest.fixture
def base(nextcloud: Nextcloud) -> Iterator[str]:
    with running_app(nextcloud.settings()) as url:
        yield url


async def test_tools_link_their_views_and_the_views_are_resources(base: str, nextcloud: Nextcloud) -> None:
    async with http_session(f"{base}/mcp") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        listed = {str(r.uri): r for r in (await session.list_resources()).resources}
        read = {uri: await session.read_resource(uri) for uri in (AGENDA, APPROVAL)}
    for name, tool in tools.items():
        meta = tool.meta or {}
        if name in LINKED:
            assert meta["ui"] == {"resourceUri": LINKED[name]}, name
            assert meta["ui/resourceUri"] == LINKED[name], name
        else:
            assert not {"ui", "ui/resourceUri"} & set(meta), name
    for view in VIEWS:
        assert listed[view.uri].mime_type == MIME_TYPE
        [content] = read[view.uri].contents
        assert content.mime_type == MIME_TYPE
        text = getattr(content, "text", "")
        assert text == html(view)
        empty = {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}
        assert content.meta == {"ui": {"csp": empty, "prefersBorder": True}}
        assert listed[view.uri].meta == content.meta
        # nothing of the deployment in it: no address, no password
        for secret in (nextcloud.url, nextcloud.admin.app_password, nextcloud.admin.password):
            assert secret not in text


async def test_a_client_without_ui_gets_the_same_results(base: str, nextcloud: Nextcloud) -> None:
    """Each linked tool answers a client that declares MCP Apps support and one that does not with
    the same text and the same structured content (read tools, an approval declined)."""
    nextcloud.put_calendar_object(nextcloud.admin, "standup", EVENT)
    note = nextcloud.add_note(title="Groceries", content="milk")
    nextcloud.make_folder(nextcloud.admin, "Old")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("nc_calendar_list_events", {"start": "2026-12-07", "end": "2026-12-08", "timezone": "UTC"}),
        (
            "nc_calendar_find_availability",
            {"start": "2026-12-07", "end": "2026-12-08", "duration_minutes": 30, "timezone": "UTC"},
        ),
        ("nc_notes_delete_note", {"note_id": note["id"]}),
        ("nc_webdav_delete_resource", {"path": "Old"}),
        ("nc_share_create", {"path": "Old", "kind": "link"}),
    ]
    seen: dict[bool, list[tuple[list[str], Any, bool]]] = {}
    for with_ui in (True, False):
        human = Human(action="decline")
        extensions = UI if with_ui else None
        async with http_session(
            f"{base}/mcp", elicitation_callback=human.answer, extensions=extensions
        ) as session:
            results = [await session.call_tool(name, args) for name, args in calls]
        seen[with_ui] = [
            ([b.text for b in r.content if b.type == "text"], r.structured_content, r.is_error)
            for r in results
        ]
    assert seen[True] == seen[False]
    listed, free, *declined = seen[False]
    assert [e["summary"] for e in listed[1]["events"]] == ["Standup"]
    assert free[1]["slots"][0]["start"] == "2026-12-07T09:30:00+00:00"
    assert all(is_error and "declined" in texts[0] for texts, _, is_error in declined)
    assert nextcloud.exists(nextcloud.admin, "Old")
