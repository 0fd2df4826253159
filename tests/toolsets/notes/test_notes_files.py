"""Notes listed and searched as files (ADR 0049): the same answers as the Notes API, on the
double and the real 29 and 34, and a kept listing that still sees every change."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import aiohttp
import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.models import Note
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from nextcloud_mcp_server.toolsets.notes.file_notes import (
    FoundFile,
    NotesFilesUnavailable,
    note_row,
    unzip_notes,
)
from nextcloud_mcp_server.toolsets.notes.files import NotesFiles, _file_etag
from tests.backends import Login, Nextcloud
from tests.conftest import ADMIN_APP_PASSWORD, ADMIN_PASSWORD, ALICE_APP_PASSWORD, ALICE_PASSWORD
from tests.mcp_clients import stdio_session, structured
from tests.nextcloud_double.app import NextcloudDouble

pytestmark = pytest.mark.integration
T = TypeVar("T")

READS = ("GET /remote.php/dav/", "GET /index.php/apps/notes/api/v1/notes")
NOTES = [
    ("Café crème", "a note about café and croissants", "Travel"),
    ("Garden plan", "tomatoes, beans and a budget", "Work/Projects"),
    ("Budget 2026", "the garden budget line", ""),
    ("dots.in.title", "plain text", "Personal"),
    ('Plan: "A/B" & <tests>?', "characters Nextcloud replaces in a file name", "Work"),
]


def _facts(notes: list[Note]) -> list[tuple[int, str, str, bool, int]]:
    return [(n.id, n.title, n.category, n.favorite, n.modified) for n in notes]


async def _with_client(
    nextcloud: Nextcloud, use: Callable[[NextcloudClient], Awaitable[T]], sent: list[str] | None = None
) -> T:
    """Run `use` with a client for alice; `sent` collects 'METHOD path [zip]' of each request."""
    trace = aiohttp.TraceConfig()

    async def started(_s: Any, _c: Any, params: aiohttp.TraceRequestStartParams) -> None:
        if sent is not None:
            zipped = " zip" if params.headers.get("Accept") == "application/zip" else ""
            sent.append(f"{params.method} {unquote(params.url.path)}{zipped}")

    trace.on_request_start.append(started)
    http = NextcloudHTTP(nextcloud.url, trace_configs=[trace])
    try:
        return await use(
            NextcloudClient(http, BasicCredential(nextcloud.alice.user, nextcloud.alice.app_password))
        )
    finally:
        await http.aclose()


def _seed(nextcloud: Nextcloud) -> list[dict[str, Any]]:
    made = [nextcloud.add_note(nextcloud.alice, title=t, content=c, category=k) for t, c, k in NOTES]
    # files in the notes folder that are no notes: another suffix, and a hidden folder's note
    nextcloud.put_file(nextcloud.alice, "Notes/Travel/photo.png", b"\x89PNG not a note")
    nextcloud.make_folder(nextcloud.alice, "Notes/.attachments.1")
    nextcloud.put_file(nextcloud.alice, "Notes/.attachments.1/inner.md", b"hidden")
    nextcloud.put_file(nextcloud.alice, "Notes/Personal/.dotted.md", b"a hidden file is a note")
    with nextcloud.http(nextcloud.alice) as client:
        client.put(
            f"/index.php/apps/notes/api/v1/notes/{made[1]['id']}", json={"favorite": True}
        ).raise_for_status()
    return made


def _logins() -> tuple[Login, Login]:
    return (
        Login("admin", ADMIN_PASSWORD, ADMIN_APP_PASSWORD, display_name="Admin"),
        Login("alice", ALICE_PASSWORD, ALICE_APP_PASSWORD, display_name="Alice"),
    )


def _api_listing(nextcloud: Nextcloud) -> list[Note]:
    notes = [Note.model_validate(n) for n in nextcloud.notes(nextcloud.alice)]
    # Notes 6 skips hidden folders; 4.13 (on 29) lists their notes too: this server does as 6 does
    notes = [n for n in notes if not n.category.startswith(".")]
    return sorted(notes, key=lambda n: (-n.modified, n.id))


async def test_the_listing_is_the_notes_apis_newest_first(nextcloud: Nextcloud) -> None:
    """Ids, titles, nested categories, favorites and times equal the Notes API's; the photo and the
    hidden folder's file are no notes; a category filter keeps exactly that category."""
    _seed(nextcloud)
    expected = _api_listing(nextcloud)

    async def listed(nc: NextcloudClient) -> tuple[list[Note], list[Note]]:
        return await nc.api(NotesClient).newest(), await nc.api(NotesClient).newest(category="Work/Projects")

    every, projects = await _with_client(nextcloud, listed)
    assert _facts(every) == _facts(expected)
    assert [n.title for n in projects] == ["Garden plan"]
    assert projects[0].favorite is True


async def test_a_kept_listing_sees_a_change_and_a_favorite_toggle(nextcloud: Nextcloud) -> None:
    """The second unchanged listing is the kept one; a note changed elsewhere and a favorite
    toggled elsewhere (which changes no ETag) are both seen by the next listing."""
    made = _seed(nextcloud)

    async def scenario(nc: NextcloudClient) -> None:
        first = await nc.api(NotesClient).newest()
        key = f"notes:list:/remote.php/dav/files/{nextcloud.alice.user}/Notes:"
        kept = nc.answers.get(nextcloud.alice.user, key)
        again = await nc.api(NotesClient).newest()
        assert _facts(again) == _facts(first)
        assert kept is not None
        # the same kept answer: Nextcloud confirmed it, nothing was read again
        assert nc.answers.get(nextcloud.alice.user, key) is kept
        with nextcloud.http(nextcloud.alice) as client:
            client.put(
                f"/index.php/apps/notes/api/v1/notes/{made[0]['id']}", json={"favorite": True}
            ).raise_for_status()
        favorites = {n.title for n in await nc.api(NotesClient).newest() if n.favorite}
        assert favorites == {"Café crème", "Garden plan"}
        with nextcloud.http(nextcloud.alice) as client:
            client.put(
                f"/index.php/apps/notes/api/v1/notes/{made[3]['id']}", json={"title": "renamed elsewhere"}
            ).raise_for_status()
        titles = {n.title for n in await nc.api(NotesClient).newest()}
        assert "renamed elsewhere" in titles
        assert "dots.in.title" not in titles
        assert _facts(await nc.api(NotesClient).newest()) == _facts(_api_listing(nextcloud))
        made_here = await nc.api(NotesClient).create(title="Made here", content="x")
        assert nc.answers.get(nextcloud.alice.user, key) is None  # forgotten at once
        assert made_here.id in {n.id for n in await nc.api(NotesClient).newest()}

    await _with_client(nextcloud, scenario)


async def test_search_is_the_same_as_reading_every_note(nextcloud: Nextcloud) -> None:
    """Hits, order and snippets equal the old read of every note through the Notes API,
    accent-insensitive ('cafe' finds 'Café'), with a category filter; a change is seen."""
    made = _seed(nextcloud)

    async def scenario(nc: NextcloudClient) -> None:
        api_only = NotesClient(nc.http, nc.credential)
        for query, category in (
            ("cafe", None),
            ("budget", None),
            ("garden", "Work/Projects"),
            ("nothing-here", None),
        ):
            new = await nc.api(NotesClient).search(query, category=category)
            old = await api_only.search(query, category=category)
            assert [(h.id, h.snippet, h.matched_in) for h in new] == [
                (h.id, h.snippet, h.matched_in) for h in old
            ]
        assert [h.title for h in await nc.api(NotesClient).search("cafe")] == ["Café crème"]
        with nextcloud.http(nextcloud.alice) as client:
            client.put(
                f"/index.php/apps/notes/api/v1/notes/{made[3]['id']}", json={"content": "now with café"}
            ).raise_for_status()
        sent.clear()
        assert {h.title for h in await nc.api(NotesClient).search("cafe")} == {"Café crème", "dots.in.title"}
        # the kept texts: the changed note is read again by itself (with the notes changed in the
        # last seconds, whose ETag Nextcloud may keep), no zip and no walk through the API
        reads = [r for r in sent if r.startswith(READS)]
        assert "GET /remote.php/dav/files/alice/Notes/Personal/dots.in.title.md" in reads
        assert all(r.endswith(".md") for r in reads)
        sent.clear()
        await nc.api(NotesClient).search("cafe")
        assert not [r for r in sent if r.startswith(READS)]  # nothing changed, nothing read

    sent: list[str] = []
    await _with_client(nextcloud, scenario, sent)


async def test_a_listing_shown_asks_no_file_etags_and_a_search_after_it_reads_them(
    nextcloud: Nextcloud,
) -> None:
    """A listing for showing leaves out each file's ETag and upload time; a search after it
    lists again with them (it never trusts a text by a listing that has none) and finds what
    changed meanwhile; a listing shown after the search is the search's, confirmed."""
    made = _seed(nextcloud)
    key = f"notes:list:/remote.php/dav/files/{nextcloud.alice.user}/Notes:"

    async def scenario(nc: NextcloudClient) -> None:
        shown = await nc.api(NotesClient).newest()
        kept = nc.answers.get(nextcloud.alice.user, key)
        assert kept is not None
        assert kept.value.etags is None
        assert _facts(shown) == _facts(_api_listing(nextcloud))
        with nextcloud.http(nextcloud.alice) as client:
            client.put(
                f"/index.php/apps/notes/api/v1/notes/{made[2]['id']}", json={"content": "now sorbet"}
            ).raise_for_status()
        assert [h.title for h in await nc.api(NotesClient).search("sorbet")] == ["Budget 2026"]
        searched = nc.answers.get(nextcloud.alice.user, key)
        assert searched is not None
        assert searched is not kept
        assert set(searched.value.etags) == {n.id for n in searched.value.notes}
        again = await nc.api(NotesClient).newest()
        assert nc.answers.get(nextcloud.alice.user, key) is searched
        assert _facts(again) == _facts(_api_listing(nextcloud))
        assert again[-1] is again[len(again) - 1]  # each note built once
        assert _facts(again[1:3]) == _facts(list(again)[1:3])

    await _with_client(nextcloud, scenario)


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_file_id_or_upload_time_that_is_no_ascii_number_is_no_note_and_no_time() -> None:
    """What a SEARCH says of a file is untrusted: an id of other digits ('²' is a digit to
    `str.isdigit`, and `int` refuses it) or longer than 20 is no note, not a crash; such an
    upload time counts as none."""
    found = FoundFile("/x", "12", "Mon, 23 Nov 2026 18:04:30 GMT", "1", '"e"', "²")
    assert note_row("a.md", found, "") == (-1795457070, 12, "a.md", True)
    for bad in ("²", "١٢", "1" * 21, "-3", ""):
        assert note_row("a.md", dataclasses.replace(found, file_id=bad), "") is None
    assert _file_etag(found, 0, 1_000.0) == '"e"|²'  # long before the answer: kept by its ETag


def test_an_archive_yields_only_the_notes_and_refuses_a_bomb() -> None:
    """Texts by path below the top folder; other suffixes, hidden folders and a BOM are left out;
    an archive unpacking past the limit is refused (the caller falls back to the API)."""
    texts = unzip_notes(
        _zip(
            {
                "Notes/a.md": "\ufeffhello".encode(),
                "Notes/x/b.TXT": b"b",
                "Notes/p.png": b"png",
                "Notes/.h/c.md": b"c",
            }
        ),
        "",
    )
    assert texts == {"a.md": "hello", "x/b.TXT": "b"}
    with pytest.raises(NotesFilesUnavailable):
        unzip_notes(_zip({"Notes/big.md": b"0" * (49 * 1024 * 1024)}), "")
    with pytest.raises(NotesFilesUnavailable):
        unzip_notes(b"not a zip", "")


async def test_the_tools_page_newest_first_and_report_progress_when_walking_every_note(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """Over MCP: a page of the listing with the exact total; and a search, which reads every
    note's text the first time (one zip on 34, the Notes API on 29 and the double), reports
    progress to a client that sent a progress token, ending at the number of notes."""
    _seed(nextcloud)
    expected = _api_listing(nextcloud)
    events: list[tuple[float, float | None, str | None]] = []

    async def heard(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with stdio_session(nextcloud.server_env(nextcloud.alice), cwd=tmp_path) as session:
        page = structured(await session.call_tool("nc_notes_list_notes", {"limit": 2, "offset": 1}))
        found = structured(
            await session.call_tool("nc_notes_search_notes", {"query": "budget"}, progress_callback=heard)
        )
    assert page["total"] == len(expected)
    assert [n["id"] for n in page["notes"]] == [n.id for n in expected[1:3]]
    assert {h["title"] for h in found["hits"]} == {"Garden plan", "Budget 2026"}
    assert events  # the texts from one zip (34) or every note from the Notes API (29, double)
    assert events[-1][0] == events[-1][1]  # all read, and the total was known
    assert events[-1][1] >= len(expected)


async def test_a_refused_search_falls_back_to_the_notes_api(double: NextcloudDouble, double_url: str) -> None:
    """When Nextcloud refuses the DAV SEARCH, the listing comes from the Notes API (the same
    notes); when it answers, the Notes API's listing is not asked at all."""
    nextcloud = Nextcloud("double", double_url, *_logins(), double=double)
    _seed(nextcloud)

    async def listed(nc: NextcloudClient) -> list[Note]:
        return await nc.api(NotesClient).newest()

    double.requests.clear()
    fast = await _with_client(nextcloud, listed)
    assert not [r for r in double.requests if r.path.startswith("/index.php/apps/notes/api/v1/notes")]
    double.inject("SEARCH", "/remote.php/dav", 501)
    slow = await _with_client(nextcloud, listed)
    assert [r for r in double.requests if r.path == "/index.php/apps/notes/api/v1/notes"]
    assert _facts(slow) == _facts(fast) == _facts(_api_listing(nextcloud))


async def test_a_custom_notes_folder_is_listed_and_searched(nextcloud: Nextcloud) -> None:
    """With the Notes setting `notesPath` moved to a nested folder with a space, the listing and
    the search read that folder and equal the Notes API's answers."""
    with nextcloud.http(nextcloud.alice) as client:
        client.put(
            "/index.php/apps/notes/api/v1/settings", json={"notesPath": "Docs/My Notes"}
        ).raise_for_status()
    for title, content, category in NOTES:
        nextcloud.add_note(nextcloud.alice, title=title, content=content, category=category)

    async def scenario(nc: NextcloudClient) -> None:
        assert _facts(await nc.api(NotesClient).newest()) == _facts(_api_listing(nextcloud))
        assert "SEARCH /remote.php/dav/" in sent  # the folder was read as files, not by the API
        assert "GET /index.php/apps/notes/api/v1/notes" not in sent
        api_only = NotesClient(nc.http, nc.credential)
        new = [(h.id, h.snippet) for h in await nc.api(NotesClient).search("budget")]
        assert new == [(h.id, h.snippet) for h in await api_only.search("budget")]
        assert len(new) == 2

    sent: list[str] = []
    await _with_client(nextcloud, scenario, sent)
    if nextcloud.kind == "real":
        assert nextcloud.exists(nextcloud.alice, "Docs/My Notes/Budget 2026.md")


def test_a_notes_path_that_is_no_clean_path_is_not_read_over_webdav() -> None:
    """A `notesPath` from the Notes settings that would leave the user's files (or is empty) is
    refused before any request; the caller falls back to the Notes API."""
    files = NotesFiles(NextcloudHTTP("http://127.0.0.1:9"), None, _no_user, KeptAnswers())
    for bad in ("../admin", "a/../../b", "", "/"):
        with pytest.raises(NotesFilesUnavailable):
            asyncio.run(files.listing(bad))


async def _no_user() -> str:
    raise AssertionError("no request may be made")
