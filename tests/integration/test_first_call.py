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


async def test_a_first_week_of_events_and_contacts_search_skip_the_principal(
    double: NextcloudDouble, settings: Settings
) -> None:
    """The calendar and address book homes come from the DAV user id the process asks once
    (Nextcloud keeps them at calendars/<id>/ and addressbooks/users/<id>/, ADR 0082): neither the
    DAV root's current-user-principal nor the principal's home-set is asked before a first answer."""
    before = len(double.requests)
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            week = {"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC"}
            structured(await session.call_tool("nc_calendar_list_events", week))
            structured(await session.call_tool("nc_contacts_search", {"query": "x"}))
            seen = list(double.requests)[before:]
    asked = collections.Counter((r.method, r.path) for r in seen)
    assert asked[("GET", "/ocs/v2.php/cloud/user")] == 1
    assert ("PROPFIND", "/remote.php/dav/") not in asked
    assert not [p for _, p in asked if p.startswith("/remote.php/dav/principals/")]
    assert asked[("PROPFIND", "/remote.php/dav/calendars/admin/")] >= 1  # the calendars, listed
    assert asked[("PROPFIND", "/remote.php/dav/addressbooks/users/admin/")] == 1  # the books
