"""Finding by meaning on both engines (a real SQLite file, the suite's real PostgreSQL) with the
shipped model: paraphrases find their item, old vectors never answer, users stay apart."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nextcloud_mcp_server.index import meaning as meaning_module
from nextcloud_mcp_server.index.embedding import ShippedModel, Vectors, unit_rows
from nextcloud_mcp_server.index.engine import Filters, FindIndex, Item
from nextcloud_mcp_server.index.meaning import Meaning
from nextcloud_mcp_server.index.postgres import PostgresIndex
from nextcloud_mcp_server.index.postgres_vectors import PostgresVectors
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.sqlite_vectors import SQLiteVectors
from nextcloud_mcp_server.index.vectors import VectorStore
from tests.index.test_engines import ALICE, BOB, file, index, location, note, reports

__all__ = ["index", "location"]  # the engines' fixtures, shared with test_engines

MODEL = ShippedModel()  # loaded once per worker (about a second)

NOTES = [
    note(
        "boiler", "Boiler service 2024", "The technician replaced the pressure valve and bled the radiators."
    ),
    note("flight", "LH 1234 FRA LIS", "Departure 07:10 from Frankfurt, arrival in Lisbon 09:05, seat 14C."),
    note("lease", "Flat agreement", "Monthly rent 950, deposit of three months, notice period ninety days."),
    note("shop", "Groceries", "Milk, eggs, bread, apples, coffee beans."),
]


def _store(index: FindIndex) -> VectorStore:
    if isinstance(index, PostgresIndex):
        return PostgresVectors(index)
    assert isinstance(index, SQLiteIndex)
    return SQLiteVectors(index)


@pytest.fixture
async def meaning(index: FindIndex) -> Meaning:
    store = _store(index)
    await store.open()
    return Meaning(MODEL, store)


async def _top(meaning: Meaning, user: str, question: str, filters: Filters | None = None) -> list[str]:
    return [h.key for h in await meaning.nearest(user, question, filters or Filters(), limit=3)]


async def test_a_question_sharing_no_word_finds_its_note(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    assert await meaning.catch_up(ALICE) == len(NOTES)
    assert (await _top(meaning, ALICE, "when was the heating repaired"))[0] == "boiler"
    assert (await _top(meaning, ALICE, "my plane to Portugal"))[0] == "flight"
    assert (await _top(meaning, ALICE, "rental contract"))[0] == "lease"
    assert (await meaning.progress(ALICE)).embedded == len(NOTES)
    assert await meaning.catch_up(ALICE) == 0  # nothing left: no item embedded twice


async def test_a_hit_points_at_its_passage(index: FindIndex, meaning: Meaning) -> None:
    body = (
        "# Kitchen\nNew tiles and a tap.\n\n"
        + "Filler words about nothing much. " * 40
        + ("\n\n# Garden\nThe apple tree was pruned and the hedge cut back.")
    )
    await index.put(ALICE, [file("House/works.md", body)])
    await meaning.catch_up(ALICE)
    [hit] = await meaning.nearest(ALICE, "trimming fruit trees outside", Filters(), limit=1)
    assert hit.key == "House/works.md"
    assert "apple tree" in hit.excerpt
    assert "Kitchen" not in hit.excerpt


async def test_an_edited_item_never_answers_from_its_old_vectors(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    await meaning.catch_up(ALICE)
    await index.put(ALICE, [note("boiler", "Boiler service 2024", "Replaced", modified=1_800_000_000.0)])
    edited = Item(
        "note", "boiler", "Cat food", "", 1_800_000_000.0, "etag-boiler-2", "Salmon pouches for the cat."
    )
    await index.put(ALICE, [edited])
    assert "boiler" not in await _top(meaning, ALICE, "when was the heating repaired")
    assert await meaning.catch_up(ALICE) == 1
    assert (await _top(meaning, ALICE, "what does the pet eat"))[0] == "boiler"


async def test_deleted_items_and_other_users_are_never_answered(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    await index.put(BOB, [note("bob-boiler", "Heater", "The heating engineer fixed the boiler.")])
    await meaning.catch_up(ALICE)
    await meaning.catch_up(BOB)
    assert "bob-boiler" not in await _top(meaning, ALICE, "heating repaired")
    assert await _top(meaning, BOB, "heating repaired") == ["bob-boiler"]
    await index.remove(ALICE, "note", ["boiler"])
    assert "boiler" not in await _top(meaning, ALICE, "heating repaired")
    assert await meaning.forget(ALICE) > 0
    assert await _top(meaning, ALICE, "heating repaired") == []
    assert await _top(meaning, BOB, "heating repaired") == ["bob-boiler"]


async def test_filters_hold_as_for_words(index: FindIndex, meaning: Meaning) -> None:
    await index.put(
        ALICE, [*NOTES, file("Travel/plans.md", "Flight to Lisbon in spring, hotel near the river.")]
    )
    await meaning.catch_up(ALICE)
    assert await _top(meaning, ALICE, "trip to Portugal", Filters(kinds=frozenset({"file"}))) == [
        "Travel/plans.md"
    ]
    assert await _top(meaning, ALICE, "trip to Portugal", Filters(folder="Elsewhere")) == []
    assert "flight" not in await _top(
        meaning, ALICE, "trip to Portugal", Filters(changed_after=1_800_000_000.0)
    )


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (Filters(kinds=frozenset({"note"})), {"1"}),
        (Filters(folder="/Work/"), {"Work/report.md", "Work/2026/q1.txt"}),
        (Filters(folder="Work%"), set()),
        (Filters(folder="Work_x"), {"Work_x/report.txt"}),
        (Filters(changed_after=300.0, changed_before=500.0), {"Work/2026/q1.txt", "Workshop/report.txt"}),
        (Filters(kinds=frozenset({"file"}), folder="Work", changed_before=300.0), {"Work/report.md"}),
    ],
)
async def test_meaning_and_words_read_a_filter_alike(
    index: FindIndex, meaning: Meaning, filters: Filters, kept: set[str]
) -> None:
    """The passages meaning weighs are those of exactly the items the word search keeps: one
    filter reading per engine (a folder and below, not a sibling sharing its prefix; `%` and `_`
    as letters; changed after inclusive, before exclusive)."""
    await index.put(ALICE, reports())
    assert await meaning.catch_up(ALICE) == 5
    by_words = {h.key for h in await index.search(ALICE, parse_query("report"), filters, limit=50)}
    by_meaning = {c.key for c in await meaning.store.candidates(ALICE, meaning.model, filters)}
    assert by_words == by_meaning == kept


async def test_a_new_model_never_mixes_with_the_old_ones_vectors(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, NOTES)
    await meaning.catch_up(ALICE)

    class Renamed(ShippedModel):
        @property
        def identity(self) -> str:
            return "another-model-256"

    other = Meaning(Renamed(), meaning.store)
    assert await _top(other, ALICE, "heating repaired") == []  # nothing of the old model answers
    assert (await other.progress(ALICE)).embedded == 0
    assert await other.catch_up(ALICE, max_items=2) == 2  # the old model's vectors are pruned first
    assert (await meaning.progress(ALICE)).embedded == 0


async def test_catching_up_is_bounded_per_call(index: FindIndex, meaning: Meaning) -> None:
    await index.put(ALICE, [note(str(i), f"Note {i}", "Words " * 5) for i in range(30)])
    assert await meaning.catch_up(ALICE, max_items=7) == 7
    assert (await meaning.progress(ALICE)).embedded == 7


class _Clock:
    """A monotonic clock that moves only when the stub model embeds (no real time is measured)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))


class _TimedModel:
    """Embeds in `took` seconds of the clock's time each call (10 ms unless told)."""

    identity = "timed-4"

    def __init__(self, clock: _Clock, took: float = 0.010) -> None:
        self.clock = clock
        self.took = took

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.clock.now += self.took
        return unit_rows(np.ones((len(texts), 4)))


async def test_a_background_run_rests_between_items_and_a_call_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `rest` 3, each item is followed by a wait three times as long as the item took (the
    process embeds a quarter of the time at most: docs/ADR/0091); the default (a call's own
    catch-up, the person waiting) never waits."""
    clock = _Clock()
    shim = SimpleNamespace(Lock=asyncio.Lock, to_thread=asyncio.to_thread, sleep=clock.sleep)
    monkeypatch.setattr(meaning_module, "time", clock)
    monkeypatch.setattr(meaning_module, "asyncio", shim)
    index = SQLiteIndex(tmp_path / "find-index.sqlite3")
    await index.open()
    try:
        store = SQLiteVectors(index)
        await store.open()
        await index.put(ALICE, NOTES)
        await index.put(BOB, NOTES)
        timed = Meaning(_TimedModel(clock), store)
        assert await timed.catch_up(ALICE, rest=3.0) == len(NOTES)
        assert clock.slept == [0.03] * len(NOTES)
        clock.slept.clear()
        assert await timed.catch_up(BOB) == len(NOTES)
        assert clock.slept == []
        # a slow item (an endpoint taking its time): the wait never runs past the run's `seconds`
        await index.put(ALICE, [note("slow", "Slow", "one more")])
        timed.embedder = _TimedModel(clock, took=50.0)
        assert await timed.catch_up(ALICE, seconds=60.0, rest=3.0) == 1
        assert clock.slept == [10.0]
    finally:
        await index.close()
