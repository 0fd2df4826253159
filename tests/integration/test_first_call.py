"""A new process's first call asks Nextcloud only what its answer needs (issue 44, ADR 0069):
who the user is once (`cloud/user`, shared by the start-up check and every tool), never
`status.php` while things work, and every request names this server."""

from __future__ import annotations

import collections

import pytest

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.config import Settings
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_double.app import NextcloudDouble

pytestmark = pytest.mark.integration


async def test_a_first_notes_listing_makes_exactly_the_requests_it_needs(
    double: NextcloudDouble, settings: Settings
) -> None:
    double.notes.create("admin", {"title": "Garden", "content": "# Garden\nbeans"})
    before = len(double.requests)
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))["notes"]
            seen = list(double.requests)[before:]
    assert [n["title"] for n in notes] == ["Garden"]
    asked = collections.Counter((r.method, r.path) for r in seen)
    assert asked == {
        ("GET", "/ocs/v2.php/cloud/user"): 1,  # the DAV user id: the start-up check's answer
        ("GET", "/index.php/apps/notes/api/v1/settings"): 1,  # where the notes folder is
        ("PROPFIND", "/remote.php/dav/files/admin/Notes"): 1,  # its ETag, to revalidate later
        ("SEARCH", "/remote.php/dav/"): 1,  # the notes' files with their ids (ADR 0049)
    }
    assert {r.agent for r in seen} == {f"nextcloud-mcp-bridge/{__version__}"}


async def test_a_first_calendar_call_asks_who_the_user_is_once(
    double: NextcloudDouble, settings: Settings
) -> None:
    before = len(double.requests)
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            structured(
                await session.call_tool(
                    "nc_calendar_list_events", {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC"}
                )
            )
            structured(await session.call_tool("nc_notes_list_notes", {}))
            seen = list(double.requests)[before:]
    paths = [r.path for r in seen]
    assert paths.count("/ocs/v2.php/cloud/user") == 1
    assert "/status.php" not in paths
