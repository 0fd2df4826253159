"""The unified-search toolset end to end, against the double and the real Nextcloud."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


async def test_unified_search_finds_a_note_and_a_file_by_a_word_in_their_names(nextcloud: Nextcloud) -> None:
    """A word in a note's title and in a file's name finds both, each with provider, title,
    subline, URL and path. Nextcloud 29 matches names only (no full-text app, and the Notes 4.13.1
    provider never answers), so the note is found as its file Notes/<title>.md; Notes 6 on 34 finds
    it as a note too. Nothing needs occ."""
    nextcloud.add_note(title="Boiler service", content="Call the plumber about the pressure")
    nextcloud.put_file(nextcloud.admin, "house/boiler-manual.txt", b"bleed the radiators yearly")
    nextcloud.put_file(nextcloud.admin, "garden.txt", b"nothing about heating")
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            providers = structured(await session.call_tool("nc_search_list_providers", {}))
            found = structured(await session.call_tool("nc_search", {"term": "boiler"}))
            inside = structured(await session.call_tool("nc_search", {"term": "radiators"}))
    assert {"files", "notes"} <= {p["id"] for p in providers["providers"]}
    by_path = {r["attributes"].get("path"): r for r in found["results"] if r["provider"] == "files"}
    assert set(by_path) == {"/Notes/Boiler service.md", "/house/boiler-manual.txt"}
    # Notes 6 (Nextcloud 34) answers for its own provider too; Notes 4.13.1 never does
    from_notes = [r["title"] for r in found["results"] if r["provider"] == "notes"]
    assert from_notes == (["Boiler service"] if nextcloud.major >= 34 else [])
    note = by_path["/Notes/Boiler service.md"]
    assert (note["provider"], note["title"], note["subline"]) == ("files", "Boiler service.md", "in Notes")
    assert note["url"].startswith(nextcloud.url)
    assert by_path["/house/boiler-manual.txt"]["subline"] == "in house"
    assert found["errors"] == []
    assert inside["results"] == []  # contents are not indexed without a full-text search app


async def test_search_pages_with_the_providers_cursor(nextcloud: Nextcloud) -> None:
    """Three matching files, two per page: the cursor of the first page brings the third."""
    for name in ("a-report.txt", "b-report.txt", "c-report.txt"):
        nextcloud.put_file(nextcloud.admin, name, b"x")
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            first = structured(
                await session.call_tool("nc_search", {"term": "report", "providers": ["files"], "limit": 2})
            )
            second = structured(
                await session.call_tool(
                    "nc_search", {"term": "report", "limit": 2, "cursors": first["next_cursors"]}
                )
            )
    assert len(first["results"]) == 2
    assert set(first["next_cursors"]) == {"files"}
    titles = {r["title"] for r in first["results"] + second["results"]}
    assert titles == {"a-report.txt", "b-report.txt", "c-report.txt"}
    assert second["next_cursors"] == {}


async def test_an_unknown_provider_is_refused_naming_the_known_ones(nextcloud: Nextcloud) -> None:
    """Named providers are asked directly (ADR 0051); Nextcloud refuses an unknown id (a 500 on
    29), and the tool then reads the list and names the known ones instead."""
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool("nc_search", {"term": "x", "providers": ["nope"]})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "no search provider 'nope'" in text
    assert "files" in text
