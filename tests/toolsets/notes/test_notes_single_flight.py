"""Two cold searches at the same time cost Nextcloud one read of every note's text (one zip on
34, one walk through the Notes API on 29 and the double), never shared between users; and the
single-flight itself (ADR 0069)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote

import aiohttp
import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.flights import Flights
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from tests.backends import Login, Nextcloud

pytestmark = pytest.mark.integration

# what reads every note's text: the folder as a zip, or the Notes API's full listing
WHOLE_READS = ("zip", "GET /index.php/apps/notes/api/v1/notes")


async def _two_searches(nextcloud: Nextcloud, first: Login, second: Login) -> tuple[list[str], list[Any]]:
    sent: list[str] = []
    trace = aiohttp.TraceConfig()

    async def started(_s: Any, _c: Any, params: aiohttp.TraceRequestStartParams) -> None:
        zipped = "zip " if params.headers.get("Accept") == "application/zip" else ""
        sent.append(f"{zipped}{params.method} {unquote(params.url.path)}")

    trace.on_request_start.append(started)
    http = NextcloudHTTP(nextcloud.url, trace_configs=[trace])
    cache, answers = DiscoveryCache(), KeptAnswers()  # the process's, shared by every call
    clients = [
        NextcloudClient(http, BasicCredential(login.user, login.app_password), cache=cache, answers=answers)
        for login in (first, second)
    ]
    try:
        hits = await asyncio.gather(*(c.api(NotesClient).search("garden") for c in clients))
    finally:
        await http.aclose()
    return [s for s in sent if s.startswith(WHOLE_READS) and not s.endswith(".md")], hits


@pytest.mark.parametrize("nextcloud", ["double", "real34"], indirect=True)
async def test_two_cold_searches_of_one_user_read_the_notes_once(nextcloud: Nextcloud) -> None:
    for n in range(3):
        nextcloud.add_note(nextcloud.alice, title=f"Garden {n}", content=f"garden bed {n}", category="")
    nextcloud.add_note(nextcloud.admin, title="Admin garden", content="the admin's garden", category="")
    reads, hits = await _two_searches(nextcloud, nextcloud.alice, nextcloud.alice)
    # once: the zip (34), or the zip refused and the Notes API instead (29, the double)
    assert len(set(reads)) == len(reads) == (1 if nextcloud.major >= 34 else 2), reads
    assert [sorted(h.title for h in found) for found in hits] == [["Garden 0", "Garden 1", "Garden 2"]] * 2
    # two users at the same time: each reads their own notes, nothing shared
    reads, hits = await _two_searches(nextcloud, nextcloud.alice, nextcloud.admin)
    assert len(reads) == (2 if nextcloud.major >= 34 else 4), reads
    assert [h.title for h in hits[1]] == ["Admin garden"]
    assert "Admin garden" not in [h.title for h in hits[0]]


async def test_a_flight_is_shared_while_under_way_and_its_failure_not_remembered() -> None:
    flights: Flights[str] = Flights()
    gate = asyncio.Event()
    calls: list[str] = []

    async def read(value: str) -> str:
        calls.append(value)
        await gate.wait()
        return value

    first = asyncio.create_task(flights.run("k", lambda: read("one")))
    other_key = asyncio.create_task(flights.run("other", lambda: read("two")))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(flights.run("k", lambda: read("never")))
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(first, joiner, other_key) == ["one", "one", "two"]
    assert calls == ["one", "two"]
    assert len(flights) == 0

    async def failing() -> str:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await flights.run("k", failing)
    assert await flights.run("k", lambda: read("again")) == "again"  # asked again, not remembered


async def test_a_cancelled_leader_leaves_the_read_to_those_waiting() -> None:
    flights: Flights[str] = Flights()
    gate = asyncio.Event()
    calls: list[str] = []

    async def read(value: str) -> str:
        calls.append(value)
        await gate.wait()
        return value

    leader = asyncio.create_task(flights.run("k", lambda: read("leader")))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(flights.run("k", lambda: read("joiner")))
    await asyncio.sleep(0)
    leader.cancel()
    await asyncio.sleep(0)
    gate.set()
    assert await joiner == "joiner"
    assert leader.cancelled()
    assert calls == ["leader", "joiner"]
