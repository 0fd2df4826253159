"""Sync and confirmation against the double and the real Nextcloud 29 and 34: an unchanged tree
costs one PROPFIND, a change deep down is found by descending only where ETags changed, a round
cut short resumes, and hits Nextcloud no longer shows are dropped from the answer and the index."""

from __future__ import annotations

import time
from typing import Any

import pytest

from nextcloud_mcp_server.index.confirm import confirmed
from nextcloud_mcp_server.index.engine import Filters, Hit, Item
from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.sync import NOTES_FOLDER, Round, sync_files, sync_notes
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from tests.backends import Nextcloud

pytestmark = pytest.mark.integration
USER = "nextcloud:admin"


def _round(seconds: float = 60.0) -> Round:
    return Round(deadline=time.monotonic() + seconds)


async def _keys(index: SQLiteIndex, query: str) -> set[str]:
    return {h.key for h in await index.search(USER, parse_query(query), Filters(), limit=50)}


async def test_an_unchanged_tree_costs_one_propfind_and_a_deep_change_is_found(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """After a full round, the next one makes one request; a file changed three folders down is
    reindexed by listing only the folders on its path (and reading that one file)."""
    nextcloud.put_file(nextcloud.admin, "Deep/a/b/c.md", b"first pelican")
    nextcloud.put_file(nextcloud.admin, "Side/x/y.md", b"side words")
    files = await client.files()
    first = _round()
    await sync_files(index, USER, files, first)
    assert first.complete
    assert await _keys(index, "pelican") == {"Deep/a/b/c.md"}
    again = _round()
    await sync_files(index, USER, files, again)
    assert (again.requests, again.read, again.complete) == (1, 0, True)
    nextcloud.put_new_version(nextcloud.admin, "Deep/a/b/c.md", b"second flamingo")
    changed = _round()
    await sync_files(index, USER, files, changed)
    assert await _keys(index, "pelican") == set()
    assert await _keys(index, "flamingo") == {"Deep/a/b/c.md"}
    assert changed.read == 1
    assert changed.requests == 5  # the root, Deep, Deep/a, Deep/a/b listed; c.md read


async def test_a_removed_folder_takes_its_items_along(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """A folder deleted in Nextcloud: its files leave the index at the next round."""
    nextcloud.put_file(nextcloud.admin, "Gone/inner/f.md", b"ocelot")
    files = await client.files()
    await sync_files(index, USER, files, _round())
    assert await _keys(index, "ocelot") == {"Gone/inner/f.md"}
    with nextcloud.http() as http:
        assert http.delete(nextcloud.dav_path(nextcloud.admin, "Gone")).status_code == 204
    await sync_files(index, USER, files, _round())
    assert await _keys(index, "ocelot") == set()
    assert "Gone" not in await index.marks(USER, "folder")


async def test_a_round_out_of_time_is_incomplete_and_the_next_one_resumes(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """No time left: nothing is recorded as indexed; a later round with time finishes."""
    nextcloud.put_file(nextcloud.admin, "Later/l.md", b"narwhal")
    files = await client.files()
    late = Round(deadline=time.monotonic() - 1)
    await sync_files(index, USER, files, late)
    assert not late.complete
    assert await index.marks(USER, "folder") == {}
    done = _round()
    await sync_files(index, USER, files, done)
    assert done.complete
    assert await _keys(index, "narwhal") == {"Later/l.md"}


async def test_large_text_files_are_read_only_up_to_the_bound(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """A word past the per-item bound is not indexed; the file is still found by name."""
    nextcloud.put_file(nextcloud.admin, "big.txt", b"early " + b"x " * 4000 + b"lateword")
    await sync_files(index, USER, await client.files(), _round(), limits=Limits(max_bytes=1024))
    assert await _keys(index, "early") == {"big.txt"}
    assert await _keys(index, "lateword") == set()
    assert await _keys(index, "big") == {"big.txt"}


async def test_notes_sync_by_their_etags(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """Notes are indexed with their text; an unchanged set costs one listing; a deleted note goes."""
    created = nextcloud.add_note(title="Zoo", content="the capybara enclosure")
    first = _round()
    await sync_notes(index, USER, client.api(NotesClient), first)
    assert await _keys(index, "capybara") == {str(created["id"])}
    again = _round()
    await sync_notes(index, USER, client.api(NotesClient), again)
    assert (again.requests, again.read) == (1, 0)
    with nextcloud.http() as http:
        assert http.delete(f"/index.php/apps/notes/api/v1/notes/{created['id']}").status_code == 200
    await sync_notes(index, USER, client.api(NotesClient), _round())
    assert await _keys(index, "capybara") == set()


async def test_hits_still_there_are_confirmed_by_one_search(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File hits in three folders and a note that Nextcloud still has are confirmed by one SEARCH
    (the files by name, the note by its file's id inside the notes folder), not by a PROPFIND per
    folder and a read per note (docs/ADR/0089). What it does not show is checked as before, which
    decides: a file of the same name elsewhere does not stand in for one that moved, and a note it
    does not show is read by id."""
    for path in ("One/ibex.md", "Two/deeper/ibex notes.md", "Three/ibex.md"):
        nextcloud.put_file(nextcloud.admin, path, b"ibex")
    note = nextcloud.add_note(title="Ibex", content="an ibex note")
    paths = ["One/ibex.md", "Two/deeper/ibex notes.md", "Three/ibex.md", "Four/ibex.md"]
    items = [Item("file", p, p.rpartition("/")[2], p.rpartition("/")[0], 0.0, "e", "ibex") for p in paths]
    items += [
        Item("note", str(note["id"]), "Ibex", "", 0.0, "e", "ibex"),
        Item("note", "999999", "x", "", 0.0, "e", "ibex"),
    ]
    await index.put(USER, items)
    notes_path = (await client.api(NotesClient).settings()).notes_path  # as a round records it
    await index.set_marks(USER, NOTES_FOLDER, {"path": notes_path.strip("/")})
    hits = await index.search(USER, parse_query("ibex"), Filters(), limit=10)
    await client.files()  # the client discovered (once per process in the server)
    sent: list[str] = []
    send = client.http._open

    async def counted(method: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(method.upper())
        return await send(method, *args, **kwargs)

    monkeypatch.setattr(client.http, "_open", counted)
    kept, dropped = await confirmed(index, USER, hits, client)
    assert sorted(h.key for h in kept) == sorted([*paths[:3], str(note["id"])])
    assert dropped == 2  # Four/ibex.md ("ibex.md" is found elsewhere, not in Four) and the ghost note
    assert sent[0] == "SEARCH"
    assert sorted(sent[1:]) == ["GET", "PROPFIND"], sent  # the ghost note read, Four listed


async def test_hits_nextcloud_no_longer_shows_are_dropped_and_unindexed(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """Items the index still holds but Nextcloud no longer has (a stale index) are confirmed
    away (notes read by id, one PROPFIND per folder) and removed from the index."""
    nextcloud.put_file(nextcloud.admin, "Real/here.md", b"x")
    await index.put(
        USER,
        [
            Item("file", "Real/here.md", "here.md", "Real", 0.0, "e", "stale yak"),
            Item("file", "Real/gone.md", "gone.md", "Real", 0.0, "e", "stale yak"),
            Item("file", "Nowhere/gone.md", "gone.md", "Nowhere", 0.0, "e", "stale yak"),
            Item("note", "999999", "ghost", "", 0.0, "e", "stale yak"),
        ],
    )
    hits: list[Hit] = await index.search(USER, parse_query("yak"), Filters(), limit=10)
    assert len(hits) == 4
    kept, dropped = await confirmed(index, USER, hits, client)
    assert ([h.key for h in kept], dropped) == (["Real/here.md"], 3)
    assert await _keys(index, "yak") == {"Real/here.md"}
