"""nc_find by meaning end to end, on the double and the real Nextcloud 29 and 34, with the model
shipped in the wheel and with an OpenAI-compatible endpoint serving it: a question that shares
no word with a note or a passage of a Markdown file finds it, flagged as found by meaning; a
deleted note is no longer found; the index's own words still come first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.embeddings_endpoint import serve_embeddings
from tests.index import documents
from tests.mcp_clients import http_session, running_app, structured
from tests.postgres import PostgresCluster

pytestmark = pytest.mark.integration

FILLER = b"Some words about nothing in particular, written to fill the page. " * 30
GARDEN = (
    b"# Kitchen\nNew tiles and a tap.\n\n"
    + FILLER
    + b"\n\n# Garden\nThe apple tree was pruned and the hedge cut back."
)


def _settings(nextcloud: Nextcloud, tmp_path: Path, **more: Any) -> Any:
    return nextcloud.settings(
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "index" / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        **more,
    )


async def _find(base: str, query: str, **arguments: Any) -> dict[str, Any]:
    async with http_session(f"{base}/mcp") as session:
        return structured(await session.call_tool("nc_find", {"query": query, **arguments}))


async def test_a_question_in_other_words_finds_the_note_and_the_passage(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    created = nextcloud.add_note(
        title="Boiler service 2024",
        content="The technician replaced the pressure valve and bled the radiators.",
    )
    nextcloud.put_file(nextcloud.admin, "House/works.md", GARDEN)
    nextcloud.put_file(nextcloud.admin, "House/boiler-manual.md", b"Boiler manual: pressure valve settings.")
    with running_app(_settings(nextcloud, tmp_path)) as base:
        by_words = await _find(base, "heating repaired", mode="words")
        both = await _find(base, "when was the heating repaired")
        garden = await _find(base, "trimming fruit trees outside", kinds=["file"])
        mixed = await _find(base, "boiler")
        with nextcloud.http() as client:
            assert client.delete(f"/index.php/apps/notes/api/v1/notes/{created['id']}").status_code == 200
        after = await _find(base, "when was the heating repaired", mode="meaning")
    assert by_words["hits"] == []
    assert (both["hits"][0]["title"], both["hits"][0]["by"]) == ("Boiler service 2024", "meaning")
    assert both["index"]["by_meaning"] == sum(both["index"]["items"].values()) >= 3  # all of it, at once
    [first, *_] = garden["hits"]
    assert first["uri"] == "nextcloud://files/House/works.md"
    assert "apple tree" in first["excerpt"]
    assert "Kitchen" not in first["excerpt"]  # the passage that matched, not the file's start
    # both ways: what has the word comes first, marked; nothing found by meaning outranks it
    bys = [h["by"] for h in mixed["hits"]]
    assert bys == sorted(bys, key=lambda b: b != "words")
    assert {h["title"] for h in mixed["hits"] if h["by"] == "words"} == {
        "Boiler service 2024",
        "boiler-manual.md",
    }
    assert "Boiler service 2024" not in [h["title"] for h in after["hits"]]


async def test_an_openai_compatible_endpoint_is_used_and_its_failure_is_said(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """FIND_MEANING=endpoint sends the passages and the question to the endpoint (the shipped
    model behind an OpenAI-compatible API here); a dead endpoint is named in the answer."""
    nextcloud.add_note(
        title="LH 1234 FRA LIS", content="Departure from Frankfurt, arrival in Lisbon, seat 14C."
    )
    async with serve_embeddings() as (url, received):
        settings = _settings(
            nextcloud,
            tmp_path,
            find_meaning="endpoint",
            find_embeddings_url=url,
            find_embeddings_model="wordllama",
        )
        with running_app(settings) as base:
            found = await _find(base, "my plane to Portugal", mode="meaning")
    assert found["hits"][0]["title"] == "LH 1234 FRA LIS"
    assert any("my plane to Portugal" in r["body"]["input"] for r in received)
    dead = _settings(
        nextcloud,
        tmp_path / "dead",
        find_meaning="endpoint",
        find_embeddings_url="http://127.0.0.1:9/v1",
        find_embeddings_model="m",
    )
    with running_app(dead) as base:
        async with http_session(f"{base}/mcp") as session:
            refused = await session.call_tool("nc_find", {"query": "my plane", "mode": "meaning"})
            by_words = structured(await session.call_tool("nc_find", {"query": "Lisbon", "mode": "words"}))
    assert refused.is_error
    assert "127.0.0.1:9/v1/embeddings did not answer" in refused.content[0].text  # type: ignore[union-attr]
    assert [h["title"] for h in by_words["hits"]] == ["LH 1234 FRA LIS"]
    assert any(e.startswith("meaning:") for e in by_words["index"]["errors"])


@pytest.fixture
def engine(
    each_real_nextcloud: Nextcloud, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[dict[str, Any]]:
    """Where the index is: an SQLite file on 29, a PostgreSQL database on 34 (both engines run)."""
    if each_real_nextcloud.major < 34:
        yield {}
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    with cluster.database() as url:
        yield {"store_url": url}


async def test_a_pdf_passage_and_an_event_in_other_words_on_both_engines(
    each_real_nextcloud: Nextcloud, engine: dict[str, Any], tmp_path: Path
) -> None:
    """On the real Nextcloud: a question sharing no word finds a page of a PDF (its passage as the
    excerpt) and an event; the index in SQLite on 29 and in PostgreSQL on 34."""
    nextcloud = each_real_nextcloud
    filler = "\n".join(["Some words about nothing in particular, to fill a page."] * 20)  # a passage
    garden = "The apple tree was pruned\nand the hedge cut back."
    nextcloud.put_file(nextcloud.admin, "Meaning/house.pdf", documents.pdf([filler, garden]))
    nextcloud.put_calendar_object(
        nextcloud.admin,
        "meaning-flight",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:meaning-flight\r\n"
        "DTSTAMP:20261101T090000Z\r\nDTSTART:20261201T071000Z\r\nDTEND:20261201T090500Z\r\n"
        "SUMMARY:LH 1234 FRA LIS\r\nDESCRIPTION:Departure from Frankfurt, arrival in Lisbon, seat 14C\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    with running_app(_settings(nextcloud, tmp_path, find_sync_seconds=30, **engine)) as base:
        pdf = await _find(base, "trimming fruit trees outside", mode="meaning", kinds=["file"])
        event = await _find(base, "my plane to Portugal", mode="meaning", kinds=["event"])
    assert pdf["hits"][0]["title"] == "house.pdf"
    assert "apple tree" in pdf["hits"][0]["excerpt"]
    assert "nothing in particular" not in pdf["hits"][0]["excerpt"]  # the passage, not the first page
    assert (event["hits"][0]["title"], event["hits"][0]["by"]) == ("LH 1234 FRA LIS", "meaning")
