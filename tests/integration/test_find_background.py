"""Background sync on the double and the real Nextcloud 29 and 34 (docs/ADR/0084): once a person's
index exists, a note and a file added in Nextcloud show in answers within 60 seconds without any
call of theirs reading Nextcloud (nc_find_status reads only the index; the next nc_find reads
nothing, the background had, and runs no round of its own: docs/ADR/0089)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration

DEADLINE = 60.0  # issue 41: a change in Nextcloud shows in answers within 60 s in background mode


async def test_a_change_in_nextcloud_shows_in_answers_within_the_deadline(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    settings = nextcloud.settings(
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",
        find_background_seconds=2,  # the default is 30: within the deadline too, slower to show
        find_sync_seconds=30,  # the first call's round completes on a busy machine too
    )
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:

            async def call(tool: str, **arguments: Any) -> dict[str, Any]:
                return structured(await session.call_tool(tool, arguments))

            first = await call("nc_find", query="heron")
            before = first["index"]["items"]
            nextcloud.add_note(title="Birds", content="a grey heron by the pond")
            nextcloud.put_file(nextcloud.admin, "Birds/sighting.md", b"the heron again")
            changed_at = time.monotonic()
            while True:
                items = (await call("nc_find_status"))["items"]
                grown = items.get("note", 0) > before.get("note", 0) and items.get("file", 0) > before.get(
                    "file", 0
                )
                if grown or time.monotonic() - changed_at > DEADLINE:
                    break
                await anyio.sleep(0.25)  # between polls
            seen_after = time.monotonic() - changed_at
            found = await call("nc_find", query="heron")
    assert first["hits"] == []
    assert first["index"]["complete"] is True, (first["index"]["errors"], first["index"]["read_now"])
    assert grown, items
    assert seen_after <= DEADLINE
    assert sorted(h["kind"] for h in found["hits"]) == ["file", "note"]
    assert found["index"]["read_now"] == 0  # the background had read both
    assert found["index"]["synced_now"] is False  # and the call did not read Nextcloud first (ADR 0089)
