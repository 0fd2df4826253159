"""nc_notes_search_notes and nc_search answer from the caller's find index once they have one,
and say so; without the find toolset, or before the person's first nc_find, nothing changes. On
the double (the real 29 and 34 run the same through test_find_sources.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.backends import Login, Nextcloud
from tests.conftest import ADMIN_APP_PASSWORD, ADMIN_PASSWORD
from tests.index import documents
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble

pytestmark = pytest.mark.integration


@pytest.fixture
def on_double(double: NextcloudDouble, double_url: str) -> Nextcloud:
    admin = Login("admin", ADMIN_PASSWORD, ADMIN_APP_PASSWORD, display_name="Admin")
    return Nextcloud("double", double_url, admin, admin, double=double)


async def _calls(base: str, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    async with http_session(f"{base}/mcp") as session:
        return [structured(await session.call_tool(name, arguments)) for name, arguments in calls]


async def test_searches_answer_from_the_index_once_the_person_has_one(
    on_double: Nextcloud, tmp_path: Path
) -> None:
    nextcloud = on_double
    nextcloud.add_note(title="Garden", content="the marigold bed")
    nextcloud.put_file(nextcloud.admin, "Docs/plan.docx", documents.docx(["where the marigold grows"]))
    settings = nextcloud.settings(
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",
    )
    notes = ("nc_notes_search_notes", {"query": "marigold"})
    search = ("nc_search", {"term": "marigold", "providers": ["notes", "files"]})
    with running_app(settings) as base:
        before_notes, before_search = await _calls(base, notes, search)
        await _calls(base, ("nc_find", {"query": "marigold"}))
        after_notes, after_search = await _calls(base, notes, search)
    assert before_notes["answered_from"] == "nextcloud"
    assert before_search["from_find_index"] == []
    assert after_notes["answered_from"] == "find index"
    assert [h["title"] for h in after_notes["hits"]] == ["Garden"]
    assert after_search["from_find_index"] == ["files", "notes"]
    found = {(r["provider"], r["title"]) for r in after_search["results"]}
    assert found == {("notes", "Garden"), ("files", "plan.docx")}  # a word inside a DOCX, too


async def test_without_the_find_toolset_searches_ask_nextcloud(on_double: Nextcloud, tmp_path: Path) -> None:
    nextcloud = on_double
    nextcloud.add_note(title="Garden", content="the marigold bed")
    settings = nextcloud.settings(store_path=tmp_path / "store.sqlite3")
    with running_app(settings) as base:
        [answer] = await _calls(base, ("nc_notes_search_notes", {"query": "marigold"}))
    assert answer["answered_from"] == "nextcloud"
    assert [h["title"] for h in answer["hits"]] == ["Garden"]


async def test_a_warm_call_in_background_mode_asks_nextcloud_only_to_confirm_its_hits(
    on_double: Nextcloud, tmp_path: Path
) -> None:
    """Where the background keeps the index (single-user mode), a call after a complete round
    runs no round of its own (docs/ADR/0089): one without hits sends Nextcloud nothing, one with
    a file hit sends one SEARCH to confirm it, and a file deleted since is dropped at once."""
    nextcloud = on_double
    double = nextcloud.double
    assert double is not None
    nextcloud.put_file(nextcloud.admin, "Docs/kudu.md", b"a kudu at the waterhole")
    nextcloud.put_file(nextcloud.admin, "Docs/eland.md", b"a kudu and an eland")
    settings = nextcloud.settings(
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",
        find_sync_seconds=30,
        find_background_seconds=600,  # kept current in the background; no pass during this test
    )
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:

            async def find(query: str) -> tuple[dict[str, Any], list[str]]:
                before = len(double.requests)
                found = structured(await session.call_tool("nc_find", {"query": query}))
                return found, [f"{r.method} {r.path}" for r in list(double.requests)[before:]]

            first, _ = await find("kudu")
            nothing, asked_nothing = await find("zebu")
            warm, asked_warm = await find("kudu")
            with nextcloud.http() as client:
                assert client.delete(nextcloud.dav_path(nextcloud.admin, "Docs/eland.md")).status_code == 204
            gone, _ = await find("eland")
    assert (first["index"]["synced_now"], len(first["hits"])) == (True, 2)
    assert (nothing["index"]["synced_now"], nothing["hits"], asked_nothing) == (False, [], [])
    assert warm["index"]["synced_now"] is False
    assert sorted(h["title"] for h in warm["hits"]) == ["eland.md", "kudu.md"]
    assert [a.split()[0] for a in asked_warm] == ["SEARCH"], asked_warm
    assert (gone["hits"], gone["dropped"], gone["index"]["synced_now"]) == ([], 1, False)
