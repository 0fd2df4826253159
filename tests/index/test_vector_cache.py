"""A user's passages kept in memory between calls (docs/ADR/0095), on both engines: answered from
memory while the index's change mark stays, read again after any write from another connection
(another process or replica), bounded per user and in total, dropped when the index is
forgotten, never another user's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from nextcloud_mcp_server.index import postgres
from nextcloud_mcp_server.index.engine import Filters, FindIndex, Item
from nextcloud_mcp_server.index.meaning import Meaning
from nextcloud_mcp_server.index.postgres import PostgresIndex
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.vector_cache import Matrix, VectorCache
from nextcloud_mcp_server.index.vectors import Candidate, VectorStore
from nextcloud_mcp_server.storage.pg_pool import ConnectionPool
from nextcloud_mcp_server.storage.postgres import migrate
from tests.index.test_engines import ALICE, BOB, index, location, note, reports
from tests.index.test_meaning import MODEL, NOTES, _store, meaning

__all__ = ["index", "location", "meaning"]  # the engines' fixtures, shared with test_engines

MB = 1 << 20


class Counting:
    """A store that counts how often the passages are read (everything else passes through)."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def candidates(self, user: str, model: str, filters: Filters) -> list[Candidate]:
        self.reads += 1
        return await self.store.candidates(user, model, filters)


def _other(location: str) -> FindIndex:
    """A second connection to the same index: another process's or replica's."""
    if location.startswith("postgresql://"):
        return PostgresIndex(location)
    return SQLiteIndex(Path(location))


@pytest.fixture
async def other(location: str) -> AsyncIterator[tuple[FindIndex, Meaning]]:
    opened = _other(location)
    await opened.open()
    store = _store(opened)
    await store.open()
    yield opened, Meaning(MODEL, store)
    await opened.close()


@pytest.fixture
async def counting(index: FindIndex) -> tuple[Meaning, Counting]:
    store = _store(index)
    await store.open()
    counted = Counting(store)
    return Meaning(MODEL, counted), counted  # type: ignore[arg-type]


async def _keys(meaning: Meaning, user: str, question: str, filters: Filters | None = None) -> list[str]:
    return [h.key for h in await meaning.nearest(user, question, filters or Filters(), limit=10)]


async def test_a_warm_search_answers_from_memory_until_another_connection_writes(
    index: FindIndex, counting: tuple[Meaning, Counting], other: tuple[FindIndex, Meaning]
) -> None:
    meaning, counted = counting
    elsewhere, elsewhere_meaning = other
    await index.put(ALICE, NOTES)
    await meaning.catch_up(ALICE)
    first = await _keys(meaning, ALICE, "when was the heating repaired")
    assert first[0] == "boiler"
    assert counted.reads == 1
    assert await _keys(meaning, ALICE, "when was the heating repaired") == first
    assert await _keys(meaning, ALICE, "my plane to Portugal", Filters(kinds=frozenset({"note"})))
    assert counted.reads == 1  # from memory: kinds filtered there
    # another replica edits the boiler note (new text, new version) and embeds it
    edited = Item("note", "boiler", "Cat food", "", 1_800_000_000.0, "etag-2", "Salmon pouches for the cat.")
    await elsewhere.put(ALICE, [edited])
    assert "boiler" not in await _keys(meaning, ALICE, "when was the heating repaired")
    assert counted.reads == 2
    assert await elsewhere_meaning.catch_up(ALICE) == 1
    assert (await _keys(meaning, ALICE, "what does the pet eat"))[0] == "boiler"
    assert counted.reads == 3
    # another replica removes it: gone at once here too
    assert await elsewhere.remove(ALICE, "note", ["boiler"]) == 1
    assert "boiler" not in await _keys(meaning, ALICE, "what does the pet eat")
    # and forgets alice altogether: nothing of hers is answered, nothing kept
    await elsewhere.forget(ALICE)
    await elsewhere_meaning.forget(ALICE)
    assert await _keys(meaning, ALICE, "my plane to Portugal") == []
    assert ALICE not in meaning.cache


async def test_every_write_moves_the_mark_and_nothing_else_does(
    index: FindIndex, meaning: Meaning, other: tuple[FindIndex, Meaning]
) -> None:
    store = meaning.store
    assert await store.mark(ALICE) is None
    seen: list[str | None] = []

    async def moved() -> bool:
        mark = await store.mark(ALICE)
        fresh = mark not in seen
        seen.append(mark)
        return fresh

    await index.put(ALICE, reports())
    assert await moved()
    assert await meaning.catch_up(ALICE) == 5
    assert await moved()
    await index.put(ALICE, [Item("file", "Work/report.md", "report.md", "Work", 900.0, "etag-2", "again")])
    assert await moved()
    assert await meaning.catch_up(ALICE) == 1  # the old passages pruned, the new ones put
    assert await moved()
    assert await index.remove(ALICE, "note", ["1"]) == 1
    assert await moved()
    assert await index.remove_below(ALICE, "file", "Work") == 2
    assert await moved()
    assert await store.prune(ALICE, meaning.model) > 0
    assert await moved()
    # nothing changed: no new mark (a warm search keeps what it has)
    assert await index.remove(ALICE, "note", ["absent"]) == 0
    assert await index.remove_below(ALICE, "file", "Absent") == 0
    assert await store.prune(ALICE, meaning.model) == 0
    await index.set_status(ALICE, synced_at=1.0, complete=True, error="")
    await index.set_marks(ALICE, "folder", {"": "etag"})
    assert await index.search(ALICE, parse_query("absentword"), Filters(), limit=1) == []
    assert not await moved()
    # bob's writes are his own
    await index.put(BOB, [note("b", "Bob", "words")])
    assert not await moved()
    assert await store.mark(BOB) is not None
    # forgotten: no mark at all (nothing of alice's is kept; a reading process keeps nothing)
    await index.forget(ALICE)
    await store.forget(ALICE)
    assert await store.mark(ALICE) is None
    assert await store.mark(BOB) is not None


async def test_a_user_never_gets_anothers_passages(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    await meaning.catch_up(ALICE)
    assert (await _keys(meaning, ALICE, "heating repaired"))[0] == "boiler"
    assert ALICE in meaning.cache
    assert await _keys(meaning, BOB, "heating repaired") == []  # bob has nothing: nothing of alice's
    await index.put(BOB, [note("bob-boiler", "Heater", "The heating engineer fixed the boiler.")])
    await meaning.catch_up(BOB)
    assert await _keys(meaning, BOB, "heating repaired") == ["bob-boiler"]
    assert "bob-boiler" not in await _keys(meaning, ALICE, "heating repaired")


async def test_forgetting_drops_what_is_kept(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    await index.put(BOB, NOTES)
    for user in (ALICE, BOB):
        await meaning.catch_up(user)
        await _keys(meaning, user, "heating repaired")
    assert ALICE in meaning.cache
    assert BOB in meaning.cache
    await index.forget(ALICE)
    await meaning.forget(ALICE)
    assert ALICE not in meaning.cache
    assert BOB in meaning.cache
    assert await _keys(meaning, ALICE, "heating repaired") == []


async def test_a_folder_filter_is_the_engines_and_agrees_with_memory(
    index: FindIndex, meaning: Meaning
) -> None:
    """Kinds and times are filtered in memory, a folder by the engine: each keeps exactly what the
    word search keeps."""
    await index.put(ALICE, reports())
    await meaning.catch_up(ALICE)
    cases = [
        (Filters(kinds=frozenset({"note"})), {"1"}),
        (Filters(folder="/Work/"), {"Work/report.md", "Work/2026/q1.txt"}),
        (Filters(changed_after=300.0, changed_before=500.0), {"Work/2026/q1.txt", "Workshop/report.txt"}),
        (Filters(kinds=frozenset({"file"}), changed_before=300.0), {"Work/report.md"}),
    ]
    for filters, kept in cases:
        assert set(await _keys(meaning, ALICE, "report", filters)) == kept
    assert set(await _keys(meaning, ALICE, "report")) == {
        "1",
        "Work/report.md",
        "Work/2026/q1.txt",
        "Workshop/report.txt",
        "Work_x/report.txt",
    }


def _candidates(user_items: int, passages: int = 2, width: int = 4) -> list[Candidate]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(user_items):
        for p in range(passages):
            vector = rng.normal(size=width).astype("<f4")
            vector /= np.linalg.norm(vector)
            out.append(
                Candidate("file", f"f{i}", f"T{i}", "", float(i), "v", 0, 5, f"text{p}", vector.tobytes())
            )
    return out


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bounds_hold_per_user_and_in_total_least_recently_used_first() -> None:
    one = Matrix.of(_candidates(50), 4)
    assert one.size > 50 * 2 * 16  # at least the vectors
    cache = VectorCache(total_bytes=2 * one.size + one.size // 2, user_bytes=one.size)
    for user in ("a", "b"):
        assert cache.put(user, "m", "1", one, cache.ticket(user))
    assert cache.get("a", "m", "1", 4) is one  # a is now the most recently used
    assert cache.put("c", "m", "1", one, cache.ticket("c"))
    assert "b" not in cache
    assert "a" in cache
    assert "c" in cache
    assert cache.size == 2 * one.size <= cache.total_bytes
    bigger = Matrix.of(_candidates(60), 4)
    assert not cache.put("d", "m", "1", bigger, cache.ticket("d"))  # over the per-user bound: not kept
    assert "d" not in cache
    assert cache.size == 2 * one.size
    # another mark, model or width is not what is kept
    assert cache.get("a", "m", "2", 4) is None
    assert "a" not in cache
    assert cache.get("c", "other", "1", 4) is None
    assert cache.size == 0
    assert not VectorCache(total_bytes=0, user_bytes=MB).enabled


def test_a_forget_during_a_read_is_not_undone_and_idle_entries_go() -> None:
    clock = _Clock()
    cache = VectorCache(total_bytes=MB, user_bytes=MB, idle_seconds=60.0, clock=clock)
    matrix = Matrix.of(_candidates(3), 4)
    ticket = cache.ticket("a")  # a read starts ...
    cache.drop("a")  # ... the index is forgotten meanwhile ...
    assert not cache.put("a", "m", "1", matrix, ticket)  # ... what the read found is not kept
    assert cache.put("a", "m", "1", matrix, cache.ticket("a"))
    clock.now += 59.0
    assert cache.get("a", "m", "1", 4) is matrix
    clock.now += 61.0
    assert cache.get("a", "m", "1", 4) is None
    assert cache.size == 0


def test_ranking_from_memory_is_best_passage_per_item_then_kind_and_key() -> None:
    width = 2
    query = np.array([[1.0, 0.0]], dtype=np.float32)

    def candidate(key: str, vector: Sequence[float], text: str, kind: str = "file") -> Candidate:
        return Candidate(
            kind, key, key.upper(), "", 1.0, "v", 0, len(text), text, np.array(vector, "<f4").tobytes()
        )

    matrix = Matrix.of(
        [
            candidate("b", [0.6, 0.8], "b weak"),
            candidate("a", [0.0, 1.0], "a unrelated"),
            candidate("b", [1.0, 0.0], "b strong"),
            candidate("c", [1.0, 0.0], "c strong", kind="note"),
            candidate("bad", [1.0, 0.0, 0.0], "another width"),
        ],
        width,
    )
    hits = matrix.nearest(query, Filters(), limit=10, floor=0.1)
    assert [(h.kind, h.key, h.excerpt) for h in hits] == [
        ("file", "b", "b strong"),
        ("note", "c", "c strong"),
    ]
    assert [h.key for h in matrix.nearest(query, Filters(), limit=1, offset=1, floor=0.1)] == ["c"]
    assert matrix.nearest(np.ones((1, 3), dtype=np.float32), Filters(), limit=5) == []


async def test_an_index_made_before_the_marks_gets_one_per_user(location: str) -> None:
    """An index from an older version (no change marks) is given a mark per user when opened, so
    its users' passages are kept in memory without waiting for a write."""
    if location.startswith("postgresql://"):
        pool = ConnectionPool(location, 1)
        await migrate(pool, postgres.LOCK, "find_version", postgres.MIGRATIONS[:1], postgres._too_new)
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO find_settings VALUES ('')")
            await conn.execute(
                "INSERT INTO find_entries (user_key, kind, key, title, location, modified, version, body, "
                "doc) VALUES (%s, 'note', '1', 't', '', 0, 'e', 'b', to_tsvector('simple', 'b'))",
                (ALICE,),
            )
        await pool.close()
    else:
        older = SQLiteIndex(Path(location))
        await older.open()
        await older.put(ALICE, [note("1", "t", "b")])
        await older.db.execute("DELETE FROM find_changes")
        await older.db.commit()
        await older.close()
    opened = _other(location)
    await opened.open()
    try:
        store = _store(opened)
        await store.open()
        assert await store.mark(ALICE) is not None
        assert await store.mark(BOB) is None
    finally:
        await opened.close()


def test_a_page_of_many_items_is_the_same_as_sorting_them_all() -> None:
    """Only the page's items are sorted: the same page as sorting every item, ties included."""
    rng = np.random.default_rng(11)
    width, query = 3, np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    rows = []
    for i in range(300):
        vector = rng.normal(size=width).astype("<f4") if i % 3 else np.array([0.5, 0.5, 0.5], "<f4")
        vector /= np.linalg.norm(vector)
        rows.append(Candidate("file", f"k{i:03}", "t", "", 1.0, "v", 0, 1, "x", vector.tobytes()))
    matrix = Matrix.of(rows, width)
    everything = matrix.nearest(query, Filters(), limit=50, offset=0, floor=-1.0)
    everything += matrix.nearest(query, Filters(), limit=50, offset=50, floor=-1.0)
    scores = {c.key: float(np.frombuffer(c.vector, "<f4")[0]) for c in rows}
    expected = sorted(scores, key=lambda k: (-scores[k], "file", k))[:100]
    assert [h.key for h in everything] == expected
    for offset in (0, 7, 33, 60):
        page = matrix.nearest(query, Filters(), limit=10, offset=offset, floor=-1.0)
        assert [h.key for h in page] == expected[offset : offset + 10]
