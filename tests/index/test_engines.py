"""The find index on both engines (a real SQLite file, the suite's real PostgreSQL): the same
queries find the same items, users never see each other's, hostile queries stay bounded."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest

from nextcloud_mcp_server.index.engine import END_MARK, START_MARK, Filters, FindIndex, Item
from nextcloud_mcp_server.index.postgres import PostgresIndex
from nextcloud_mcp_server.index.query import QueryError, parse_query
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from tests.postgres import PostgresCluster

ALICE, BOB = "alice-subject", "bob-subject"


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "find-index.sqlite3")
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    with cluster.database() as url:
        yield url


def _open(location: str, languages: tuple[str, ...] = ()) -> FindIndex:
    if location.startswith("postgresql://"):
        return PostgresIndex(location, languages=languages)
    return SQLiteIndex(Path(location))


@pytest.fixture
async def index(location: str) -> AsyncIterator[FindIndex]:
    opened = _open(location)
    await opened.open()
    yield opened
    await opened.close()


def note(key: str, title: str, body: str, *, category: str = "", modified: float = 1_700_000_000.0) -> Item:
    return Item("note", key, title, category, modified, f"etag-{key}", body)


def file(path: str, body: str, *, modified: float = 1_700_000_000.0) -> Item:
    folder, _, name = path.rpartition("/")
    return Item("file", path, name, folder, modified, f"etag-{path}", body)


def reports() -> list[Item]:
    """Five items with the word "report", for the filters: a note, files in a folder, below it, in a
    sibling sharing its prefix and in one whose name holds `_`; changed at 100, 200, ... 500."""
    return [
        note("1", "n", "report", modified=100.0),
        file("Work/report.md", "report", modified=200.0),
        file("Work/2026/q1.txt", "report", modified=300.0),
        file("Workshop/report.txt", "report", modified=400.0),
        file("Work_x/report.txt", "report", modified=500.0),
    ]


async def keys(index: FindIndex, user: str, query: str, filters: Filters | None = None) -> list[str]:
    hits = await index.search(user, parse_query(query), filters or Filters(), limit=50)
    return [hit.key for hit in hits]


async def test_a_word_is_found_with_its_match_marked_in_the_excerpt(index: FindIndex) -> None:
    """A word in a note's text is found; the excerpt marks it."""
    await index.put(
        ALICE, [note("1", "House", "The boiler warranty ends in March 2027."), note("2", "Other", "Nothing")]
    )
    [hit] = await index.search(ALICE, parse_query("warranty"), Filters(), limit=10)
    assert (hit.kind, hit.key, hit.title) == ("note", "1", "House")
    assert f"{START_MARK}warranty{END_MARK}" in hit.excerpt


async def test_case_accents_and_prefixes_do_not_matter(index: FindIndex) -> None:
    """`cafe` finds `Café`, `CAFÉ` finds `cafe`, `boil` finds `boiler`."""
    await index.put(
        ALICE, [note("1", "Trip", "We met at the Café Müller"), note("2", "Plain", "a cafe without accents")]
    )
    assert sorted(await keys(index, ALICE, "cafe")) == ["1", "2"]
    assert sorted(await keys(index, ALICE, "CAFÉ muller")) == ["1"]
    assert await keys(index, ALICE, "mull") == ["1"]
    assert await keys(index, ALICE, "mu") == ["1"]  # two letters are a prefix
    # one letter is a word of its own: as a prefix it matched nearly every word, read every
    # user's postings (SQLite), and made excerpts of a 256 KB text take seconds
    assert await keys(index, ALICE, "m") == []
    assert await keys(index, ALICE, "a cafe") == ["2"]


async def test_phrases_and_exclusions(index: FindIndex) -> None:
    """A quoted phrase needs its words in order; `-word` and `-"a phrase"` exclude."""
    await index.put(
        ALICE,
        [
            note("1", "A", "the lease terms of the flat"),
            note("2", "B", "terms of the lease, flat"),
            note("3", "C", "lease of the garage"),
        ],
    )
    assert await keys(index, ALICE, '"lease terms"') == ["1"]
    assert sorted(await keys(index, ALICE, "lease -garage")) == ["1", "2"]
    assert await keys(index, ALICE, 'lease -"lease terms" -garage') == ["2"]


async def test_a_title_match_ranks_first_and_marks_the_title(index: FindIndex) -> None:
    """A word in the title weighs more than in the text; matched only there, the title is the excerpt."""
    await index.put(ALICE, [note("1", "Groceries", "buy milk and bread"), note("2", "Milk", "from the farm")])
    hits = await index.search(ALICE, parse_query("milk"), Filters(), limit=10)
    assert [h.key for h in hits] == ["2", "1"]
    assert hits[0].excerpt == f"{START_MARK}Milk{END_MARK}"


async def test_another_user_never_sees_the_first_users_items(index: FindIndex) -> None:
    """Bob's searches, counts and versions never include Alice's rows, even for her words."""
    await index.put(ALICE, [note("1", "Secret", "alpha bravo"), file("Docs/plan.md", "alpha plan")])
    await index.put(BOB, [note("1", "Bob's", "charlie")])
    assert await keys(index, BOB, "alpha") == []
    assert await keys(index, BOB, "secret") == []
    assert (await index.status(BOB)).items == {"note": 1}
    assert await index.versions(BOB, "file") == {}
    assert await keys(index, ALICE, "charlie") == []
    # the same key is two items, one per user
    assert await index.versions(BOB, "note") == {"1": "etag-1"}
    assert await keys(index, ALICE, "alpha") != []


async def test_forgetting_a_user_deletes_only_theirs(index: FindIndex) -> None:
    """`forget` removes every item, mark and status of one user and nothing of another."""
    await index.put(ALICE, [note("1", "A", "alpha"), note("2", "B", "alpha")])
    await index.set_marks(ALICE, "folder", {"": "root-etag"})
    await index.set_status(ALICE, synced_at=5.0, complete=True, error="")
    await index.put(BOB, [note("1", "A", "alpha")])
    assert await index.forget(ALICE) == 2
    assert await keys(index, ALICE, "alpha") == []
    status = await index.status(ALICE)
    assert (status.items, status.folders, status.synced_at) == ({}, 0, None)
    assert await keys(index, BOB, "alpha") == ["1"]


async def test_filters_by_kind_folder_and_time(index: FindIndex) -> None:
    """Kinds, a folder (and below it, not a sibling with the same prefix) and changed before/after."""
    await index.put(ALICE, reports())
    assert await keys(index, ALICE, "report", Filters(kinds=frozenset({"note"}))) == ["1"]
    assert sorted(await keys(index, ALICE, "report", Filters(folder="/Work/"))) == [
        "Work/2026/q1.txt",
        "Work/report.md",
    ]
    assert await keys(index, ALICE, "report", Filters(folder="Work%")) == []
    assert sorted(await keys(index, ALICE, "report", Filters(changed_after=300.0, changed_before=500.0))) == [
        "Work/2026/q1.txt",
        "Workshop/report.txt",
    ]


async def test_replacing_and_removing_items(index: FindIndex) -> None:
    """A new version replaces the text; removed items and folders vanish from answers."""
    await index.put(ALICE, [file("A/x.md", "old words"), file("A/B/y.md", "words"), file("C/z.md", "words")])
    await index.put(ALICE, [file("A/x.md", "new text")])
    assert await keys(index, ALICE, "old") == []
    assert await keys(index, ALICE, "new") == ["A/x.md"]
    assert await index.versions(ALICE, "file", "A") == {"A/x.md": "etag-A/x.md"}
    assert await index.remove_below(ALICE, "file", "A") == 2
    assert await keys(index, ALICE, "words") == ["C/z.md"]
    assert await index.remove(ALICE, "file", ["C/z.md", "nothing"]) == 1
    assert (await index.status(ALICE)).items == {}


async def test_a_folder_is_its_exact_name_whatever_the_case_of_others(index: FindIndex) -> None:
    """SQLite's LIKE ignores ASCII case: a filter on "work" found "Work/" and "WORK/", and a folder
    "work" gone removed the items of its namesakes, which no round brought back."""
    await index.put(
        ALICE, [file("work/a.md", "plan"), file("Work/b.md", "plan"), file("WORK/deep/c.md", "plan")]
    )
    assert await keys(index, ALICE, "plan", Filters(folder="work")) == ["work/a.md"]
    assert await keys(index, ALICE, "plan", Filters(folder="Work")) == ["Work/b.md"]
    assert await index.remove_below(ALICE, "file", "work") == 1
    assert sorted(await keys(index, ALICE, "plan")) == ["WORK/deep/c.md", "Work/b.md"]


async def test_marks_are_set_and_removed(index: FindIndex) -> None:
    """Folder marks per user: set, replaced, removed with None."""
    await index.set_marks(ALICE, "folder", {"": "e1", "Docs": "e2"})
    await index.set_marks(ALICE, "folder", {"": "e3", "Docs": None})
    assert await index.marks(ALICE, "folder") == {"": "e3"}
    assert await index.marks(BOB, "folder") == {}


HOSTILE = [
    "NEAR(alpha bravo, 2)",
    "alpha*",
    '"alpha',
    "alpha\x00bravo",
    "owner:x OR alpha",
    "{owner} : alpha",
    "alpha' OR '1'='1",
    "alpha:* | !bravo & (",
    "^alpha",
    "alpha -",
]


@pytest.mark.parametrize("text", HOSTILE)
async def test_engine_syntax_in_a_query_is_only_words(index: FindIndex, text: str) -> None:
    """Operators of either engine in a query are separators: no error, no other user's rows."""
    await index.put(ALICE, [note("1", "t", "alpha bravo near owner")])
    await index.put(BOB, [note("9", "t", "alpha bravo near owner x")])
    hits = await index.search(ALICE, parse_query(text), Filters(), limit=50)
    assert {h.key for h in hits} <= {"1"}


async def test_huge_queries_are_refused_or_bounded(index: FindIndex) -> None:
    """10,000 words are refused before any engine sees them; 24 words with long ones are answered."""
    with pytest.raises(QueryError):
        parse_query(" ".join(f"w{i}" for i in range(10_000)))
    with pytest.raises(QueryError):
        parse_query("a" * 100_000)
    with pytest.raises(QueryError):
        parse_query("-only -exclusions")
    await index.put(ALICE, [note("1", "t", "alpha " + "b" * 64)])
    started = time.monotonic()
    query = parse_query("alpha " + " ".join("x" * 40 + str(i) for i in range(23)))
    assert await index.search(ALICE, query, Filters(), limit=50) == []
    assert len(parse_query("a" * 900).terms[0].words[0]) == 64
    assert time.monotonic() - started < 30  # bounded, not a timing claim: minutes would mean a blow-up


async def test_hostile_text_is_stored_cleanly(index: FindIndex) -> None:
    """NUL, lone surrogates, control characters and our own markers in a body are stored cleaned."""
    body = "start\x00mid\ud800dle\x02fake\x03 \x1b[31mred end " + "z" * 400_000
    await index.put(ALICE, [note("1", "t\x00itle", body)])
    [hit] = await index.search(ALICE, parse_query("fake"), Filters(), limit=5)
    assert hit.excerpt.count(START_MARK) == 1
    assert "\x00" not in hit.excerpt
    assert "\x1b" not in hit.excerpt


async def test_pages_do_not_overlap(index: FindIndex) -> None:
    """limit and offset page through the same order."""
    await index.put(ALICE, [note(str(i), f"n{i}", "common word") for i in range(12)])
    first = await index.search(ALICE, parse_query("common"), Filters(), limit=5)
    second = await index.search(ALICE, parse_query("common"), Filters(), limit=5, offset=5)
    third = await index.search(ALICE, parse_query("common"), Filters(), limit=5, offset=10)
    found = [h.key for h in first + second + third]
    assert len(set(found)) == len(found) == 12


async def test_the_sqlite_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """The index file (and its WAL) is created 0600, even under a lax umask."""
    old = os.umask(0o022)
    try:
        index = SQLiteIndex(tmp_path / "idx" / "find-index.sqlite3")
        await index.open()
        await index.put(ALICE, [note("1", "t", "alpha")])
        for name in ("find-index.sqlite3", "find-index.sqlite3-wal"):
            assert stat.S_IMODE((tmp_path / "idx" / name).stat().st_mode) == 0o600, name
        await index.close()
    finally:
        os.umask(old)


async def test_forgotten_words_leave_the_sqlite_file(tmp_path: Path) -> None:
    """After `forget`, a user's words are not left in the file's pages or FTS5 segments."""
    path = tmp_path / "find-index.sqlite3"
    index = SQLiteIndex(path)
    await index.open()
    await index.put(BOB, [note("1", "keep", "ordinary words")])
    await index.put(ALICE, [note("1", "t", "xylophonesecret " * 50)])
    await index.forget(ALICE)
    await index.close()  # checkpoints the WAL into the file
    assert b"xylophonesecret" not in path.read_bytes()


async def test_stemming_in_a_named_language(postgres: PostgresCluster) -> None:
    """FIND_LANGUAGES=english: `running` finds `runs` on PostgreSQL; another set empties the index."""
    with postgres.database() as url:
        index = PostgresIndex(url, languages=("english",))
        await index.open()
        await index.put(ALICE, [note("1", "t", "she runs every morning")])
        assert await keys(index, ALICE, "running") == ["1"]
        await index.close()
        again = PostgresIndex(url)
        await again.open()
        assert (await again.status(ALICE)).items == {}
        await again.close()
        with pytest.raises(Exception, match="not a text search language"):
            PostgresIndex(url, languages=("english; DROP TABLE x",))


async def test_a_text_postgresql_cannot_index_whole_is_kept_shorter_and_its_batch_kept(
    postgres: PostgresCluster,
) -> None:
    """PostgreSQL refuses a tsvector over 1 MB (many languages over a long text of distinct
    words). The batch is then written again item by item: the others as they are, that one with
    its first 32 KiB. The refusal is PostgreSQL's own error, raised here by a trigger for texts
    over 100,000 characters (a text that overflows a tsvector for real takes minutes to build)."""
    with postgres.database() as url:
        index = PostgresIndex(url)
        await index.open()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION refuse_long() RETURNS trigger AS $$ BEGIN "
                "IF length(NEW.body) > 100000 THEN RAISE EXCEPTION 'string is too long for tsvector' "
                "USING ERRCODE = 'program_limit_exceeded'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            conn.execute(
                "CREATE TRIGGER refuse_long BEFORE INSERT OR UPDATE ON find_entries "
                "FOR EACH ROW EXECUTE FUNCTION refuse_long()"
            )
        long_text = "opening " + "filler " * 20_000 + "closing"
        await index.put(ALICE, [note("1", "a", "first"), note("2", "b", long_text), note("3", "c", "third")])
        assert await keys(index, ALICE, "first") == ["1"]
        assert await keys(index, ALICE, "third") == ["3"]
        assert await keys(index, ALICE, "opening") == ["2"]
        assert await keys(index, ALICE, "closing") == []  # beyond the first 32 KiB
        await index.close()
