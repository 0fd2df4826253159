"""The Notes settings (which folder holds the notes) are asked beside the listing of the folder
they named last, not before it (ADR 0094): a new process's listing waits for two answers in a row,
not three, a warm one for one; a moved folder is followed in the same call."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import aiohttp
import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.models import Note
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from tests.backends import Nextcloud
from tests.targets import ON_THE_DOUBLE

pytestmark = pytest.mark.integration

SETTINGS = "GET /index.php/apps/notes/api/v1/settings"


def _facts(notes: list[Note]) -> list[tuple[int, str, str, bool]]:
    return [(n.id, n.title, n.category, n.favorite) for n in notes]


def _api_listing(nextcloud: Nextcloud) -> list[tuple[int, str, str, bool]]:
    notes = [Note.model_validate(n) for n in nextcloud.notes(nextcloud.alice)]
    return _facts(sorted(notes, key=lambda n: (-n.modified, n.id)))


async def _listed(
    nextcloud: Nextcloud, process: tuple[DiscoveryCache, KeptAnswers], events: list[str]
) -> list[Note]:
    """One call's listing with a new client (as each call of the server makes) sharing the
    process's discovery and kept answers; `events` gets 'sent METHOD path' and 'answered METHOD
    path'."""
    trace = aiohttp.TraceConfig()

    async def sent(_s: Any, _c: Any, params: aiohttp.TraceRequestStartParams) -> None:
        events.append(f"sent {params.method} {unquote(params.url.path)}")

    async def answered(_s: Any, _c: Any, params: aiohttp.TraceRequestEndParams) -> None:
        events.append(f"answered {params.method} {unquote(params.url.path)}")

    trace.on_request_start.append(sent)
    trace.on_request_end.append(answered)
    http = NextcloudHTTP(nextcloud.url, trace_configs=[trace])
    try:
        credential = BasicCredential(nextcloud.alice.user, nextcloud.alice.app_password)
        cache, answers = process
        nc = NextcloudClient(http, credential, cache=cache, answers=answers)
        return await nc.api(NotesClient).newest()
    finally:
        await http.aclose()


async def _warmed_up(nextcloud: Nextcloud, cache: DiscoveryCache) -> None:
    """The user's DAV id, as a process's warm-up asks it before the first call (ADR 0090)."""
    http = NextcloudHTTP(nextcloud.url)
    try:
        credential = BasicCredential(nextcloud.alice.user, nextcloud.alice.app_password)
        await NextcloudClient(http, credential, cache=cache).dav_user_id()
    finally:
        await http.aclose()


def _before_any_answer(events: list[str]) -> list[str]:
    first = next(i for i, e in enumerate(events) if e.startswith("answered"))
    return [e.removeprefix("sent ") for e in events[:first]]


@ON_THE_DOUBLE
async def test_the_notes_settings_are_asked_beside_the_listing_and_a_moved_folder_is_followed(
    nextcloud: Nextcloud,
) -> None:
    nextcloud.add_note(nextcloud.alice, title="Garden", content="beans", category="Home")
    nextcloud.add_note(nextcloud.alice, title="Budget", content="lines", category="")
    process = (DiscoveryCache(), KeptAnswers())
    await _warmed_up(nextcloud, process[0])
    folder = f"/remote.php/dav/files/{nextcloud.alice.user}/Notes"

    events: list[str] = []
    assert _facts(await _listed(nextcloud, process, events)) == _api_listing(nextcloud)
    # a new process after its warm-up: the settings and the folder's ETag together, then the SEARCH
    assert sorted(_before_any_answer(events)) == sorted([SETTINGS, f"PROPFIND {folder}"])
    assert len([e for e in events if e.startswith("sent")]) == 3

    events.clear()
    assert _facts(await _listed(nextcloud, process, events)) == _api_listing(nextcloud)
    # warm: the settings, the ETag and the favorites' SEARCH in one round trip
    assert sorted(_before_any_answer(events)) == sorted(
        [SETTINGS, f"PROPFIND {folder}", "SEARCH /remote.php/dav/"]
    )
    assert len([e for e in events if e.startswith("sent")]) == 3

    with nextcloud.http(nextcloud.alice) as client:
        client.put("/index.php/apps/notes/api/v1/settings", json={"notesPath": "Moved"}).raise_for_status()
    nextcloud.add_note(nextcloud.alice, title="Elsewhere", content="in the moved folder", category="")
    events.clear()
    moved = await _listed(nextcloud, process, events)
    assert "Elsewhere" in [n.title for n in moved]
    assert _facts(moved) == _api_listing(nextcloud)
    assert f"sent PROPFIND /remote.php/dav/files/{nextcloud.alice.user}/Moved" in events
