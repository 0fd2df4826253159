"""nc_find end to end, on the double and the real Nextcloud 29 and 34: words inside notes and
Markdown files found with excerpts, deletions gone at the next answer, one user's items never
shown to another, a share revoked mid-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.backends import Login, Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


def _settings(nextcloud: Nextcloud, tmp_path: Path, login: Login | None = None, **more: Any) -> Any:
    return nextcloud.settings(
        login,
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "index" / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",  # by words only here; by meaning: test_find_meaning.py
        # a first round completes on a busy machine too (out of time: tests/index/test_sync.py)
        find_sync_seconds=30,
        **more,
    )


async def _find(base: str, query: str, **arguments: Any) -> dict[str, Any]:
    async with http_session(f"{base}/mcp") as session:
        return structured(await session.call_tool("nc_find", {"query": query, **arguments}))


def _delete(nextcloud: Nextcloud, login: Login, path: str) -> None:
    with nextcloud.http(login) as client:
        assert client.delete(nextcloud.dav_path(login, path)).status_code == 204


async def test_a_word_in_a_note_and_in_a_markdown_file_is_found_with_an_excerpt(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """A word inside a note's text and inside a Markdown file's text (not their names) is found,
    each with its excerpt marked, where it is, and how to open it; accents and case ignored."""
    created = nextcloud.add_note(title="House", content="The boiler warranty ends in March; call Zoë.")
    nextcloud.put_file(
        nextcloud.admin, "Documents/house/notes.md", b"# Heating\n\nThe Boiler warranty card is here."
    )
    nextcloud.put_file(nextcloud.admin, "Documents/other.md", b"nothing to see")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        found = await _find(base, "WARRANTY")
        accented = await _find(base, "zoe")
        only_files = await _find(base, "warranty", kinds=["file"], folder="Documents")
    by_kind = {hit["kind"]: hit for hit in found["hits"]}
    assert set(by_kind) == {"note", "file"}
    note, file = by_kind["note"], by_kind["file"]
    assert "«warranty»" in note["excerpt"]
    assert (note["title"], note["uri"]) == ("House", f"nextcloud://notes/{created['id']}")
    assert note["open_with"] == {"tool": "nc_notes_get_note", "arguments": {"note_id": created["id"]}}
    assert "«Boiler» «warranty»" not in file["excerpt"]  # one word asked, one marked
    assert "«warranty»" in file["excerpt"]
    assert (file["title"], file["where"]) == ("notes.md", "Documents/house")
    assert file["uri"] == "nextcloud://files/Documents/house/notes.md"
    assert found["index"]["complete"] is True
    assert [h["kind"] for h in accented["hits"]] == ["note"]
    assert [h["uri"] for h in only_files["hits"]] == ["nextcloud://files/Documents/house/notes.md"]


async def test_a_deleted_note_and_file_vanish_from_the_next_answer(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """Once found, a note and a file deleted in Nextcloud are no longer shown, at once: the
    background keeps the index (single-user mode), so the next call runs no round of its own and
    only the confirmation of its hits drops them (docs/ADR/0089)."""
    created = nextcloud.add_note(title="Temp", content="quetzal sighting")
    nextcloud.put_file(nextcloud.admin, "Birds/quetzal.txt", b"a quetzal again")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        before = await _find(base, "quetzal")
        with nextcloud.http() as client:
            assert client.delete(f"/index.php/apps/notes/api/v1/notes/{created['id']}").status_code == 200
        _delete(nextcloud, nextcloud.admin, "Birds/quetzal.txt")
        after = await _find(base, "quetzal")
    assert len(before["hits"]) == 2
    assert after["hits"] == []
    assert (after["index"]["synced_now"], after["dropped"]) == (False, 2)


async def test_a_note_and_a_file_added_after_a_complete_round_are_found_at_the_next_call(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """Where nothing keeps the index current in the background (pass-through mode; here switched
    off), each call runs its own round, which reads Nextcloud again only when the root's ETag
    moved: a note (a file in the notes folder) and a file added since are both seen at once.
    (With the background on, they show within 60 s: test_find_background.py.)"""
    with running_app(_settings(nextcloud, tmp_path, find_background_seconds=0)) as base:
        before = await _find(base, "okapi")
        nextcloud.add_note(title="Zoo", content="the okapi enclosure")
        nextcloud.put_file(nextcloud.admin, "Deep/er/okapi.md", b"okapi facts")
        after = await _find(base, "okapi")
    assert before["hits"] == []
    assert before["index"]["complete"] is True
    assert sorted(h["kind"] for h in after["hits"]) == ["file", "note"]


async def test_a_second_user_never_sees_the_first_users_items(nextcloud: Nextcloud, tmp_path: Path) -> None:
    """admin and alice share one index file; alice finds her own word and never admin's."""
    nextcloud.add_note(title="Admin only", content="zanzibar plans")
    nextcloud.put_file(nextcloud.admin, "private/zanzibar.md", b"zanzibar budget")
    nextcloud.put_file(nextcloud.alice, "mine.md", b"zanzibar of alice")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        assert len((await _find(base, "zanzibar"))["hits"]) == 2
    with running_app(_settings(nextcloud, tmp_path, nextcloud.alice)) as base:
        found = await _find(base, "zanzibar")
        budget = await _find(base, "budget")
    assert [h["uri"] for h in found["hits"]] == ["nextcloud://files/mine.md"]
    assert budget["hits"] == []


async def test_forgetting_removes_the_index_and_the_next_find_rebuilds_it(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """nc_find_forget deletes the caller's index; the status then says nothing is kept."""
    nextcloud.put_file(nextcloud.admin, "a.md", b"walrus")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        assert len((await _find(base, "walrus"))["hits"]) == 1
        async with http_session(f"{base}/mcp") as session:
            forgotten = structured(await session.call_tool("nc_find_forget", {}))
            status = structured(await session.call_tool("nc_find_status", {}))
        again = await _find(base, "walrus")
    assert forgotten["removed"] >= 1
    assert (status["items"], status["synced_at"]) == ({}, None)
    assert len(again["hits"]) == 1


async def test_pages_follow_the_cursor_and_a_cursor_of_another_query_is_refused(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """Three matching files, two per page: the cursor brings the third; changed filters refuse it;
    a time filter without a zone is UTC."""
    for name in ("a", "b", "c"):
        nextcloud.put_file(nextcloud.admin, f"Pages/{name}.md", b"tapir")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        first = await _find(base, "tapir", limit=2)
        second = await _find(base, "tapir", limit=2, cursor=first["next_cursor"])
        future = await _find(base, "tapir", changed_after="2999-01-01T00:00:00")
        async with http_session(f"{base}/mcp") as session:
            other = await session.call_tool(
                "nc_find", {"query": "tapir", "kinds": ["file"], "cursor": first["next_cursor"]}
            )
    titles = [h["title"] for h in first["hits"] + second["hits"]]
    assert sorted(titles) == ["a.md", "b.md", "c.md"]
    assert other.is_error
    assert future["hits"] == []


async def test_hostile_queries_are_refused_or_answered(nextcloud: Nextcloud, tmp_path: Path) -> None:
    """Engine syntax is only words; a query of exclusions only is refused before any request."""
    nextcloud.put_file(nextcloud.admin, "a.md", b"near star")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        async with http_session(f"{base}/mcp") as session:
            refused = await session.call_tool("nc_find", {"query": "-near"})
            near = structured(await session.call_tool("nc_find", {"query": 'NEAR(star* "'}))
    assert refused.is_error
    assert "at least one word" in refused.content[0].text  # type: ignore[union-attr]
    assert [h["title"] for h in near["hits"]] == ["a.md"]


async def test_a_share_revoked_midway_vanishes_for_its_recipient(
    each_real_nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """admin shares a folder with alice; alice finds a word inside it; admin revokes the share;
    alice's next answer no longer shows it (the double does not mount shares)."""
    nextcloud = each_real_nextcloud
    nextcloud.put_file(nextcloud.admin, "Plans/roof.md", b"the gazebo roof")
    with nextcloud.http() as client:
        response = client.post(
            "/ocs/v2.php/apps/files_sharing/api/v1/shares",
            data={"path": "/Plans", "shareType": 0, "shareWith": "alice", "permissions": 1},
            headers={"Accept": "application/json"},
        )
        assert response.status_code == 200, response.text[:300]
        share_id = response.json()["ocs"]["data"]["id"]
    with running_app(_settings(nextcloud, tmp_path, nextcloud.alice)) as base:
        before = await _find(base, "gazebo")
        with nextcloud.http() as client:
            assert (
                client.delete(f"/ocs/v2.php/apps/files_sharing/api/v1/shares/{share_id}").status_code == 200
            )
        after = await _find(base, "gazebo")
    assert [h["title"] for h in before["hits"]] == ["roof.md"]
    assert after["hits"] == []
