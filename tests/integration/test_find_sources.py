"""nc_find over every source on the real Nextcloud 29 and 34 with their apps (docs/ADR/0075, 0076):
one word inside a note, a Markdown file, a PDF, a DOCX, an ODT, an event, a contact, a Deck card
and a Collectives page (on 29, whose Collectives 2.18 has no API for pages, as the Markdown file
it is), each found with an excerpt; after the owner deletes some, the next answer no longer shows
them; a second user never sees the first's items; a Deck board shared with alice and unshared
mid-way vanishes from her answers.
Notes search and unified search then answer from the index. The index is SQLite on 29 and
PostgreSQL on 34: both engines run the flow."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.backends import Login, Nextcloud
from tests.index import documents
from tests.mcp_clients import http_session, running_app, structured
from tests.postgres import PostgresCluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

DECK = "/index.php/apps/deck/api/v1.0/boards"
COLLECTIVES = "/ocs/v2.php/apps/collectives/api/v1.0/collectives"
JSON = {"OCS-APIRequest": "true", "Accept": "application/json"}
WORD = "wombatry"


@pytest.fixture
def store(
    apps_nextcloud: Nextcloud, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[dict[str, Any]]:
    """Where the index is: an SQLite file on 29, a PostgreSQL database on 34."""
    if apps_nextcloud.major < 34:
        yield {"find_index_path": tmp_path / "find-index.sqlite3", "store_path": tmp_path / "store.sqlite3"}
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    with cluster.database() as url:
        yield {"store_url": url, "store_path": tmp_path / "store.sqlite3"}


def _settings(nextcloud: Nextcloud, store: dict[str, Any], login: Login | None = None, **more: Any) -> Any:
    return nextcloud.settings(
        login,
        nextcloud_mcp_toolsets="default,find",
        find_sync_seconds=30,
        find_meaning="off",
        **store,
        **more,
    )


async def _shown_within(base: str, query: str, seconds: float) -> dict[str, Any]:
    """nc_find's first answer with hits, asked again until `seconds` passed (the background's
    round reads what changed: calls answer from the index while it is fresh, docs/ADR/0089)."""
    deadline = time.monotonic() + seconds
    while True:
        found = await _find(base, query)
        if found["hits"] or time.monotonic() > deadline:
            return found
        await anyio.sleep(0.5)  # between polls


async def _find(base: str, query: str) -> dict[str, Any]:
    """nc_find's answer once a round read everything (a round is bounded in time: on a busy
    machine the first ones may not finish; asking again goes on)."""
    async with http_session(f"{base}/mcp") as session:
        for _ in range(10):
            found = structured(await session.call_tool("nc_find", {"query": query, "limit": 20}))
            if found["index"]["complete"]:
                break
        assert found["index"]["complete"], found["index"]
        return found


def _call(nextcloud: Nextcloud, method: str, path: str, body: Any = None, login: Login | None = None) -> Any:
    with nextcloud.http(login) as client:
        response = client.request(method, path, json=body, headers=JSON)
    assert response.status_code < 300, (path, response.status_code, response.text[:300])
    data = response.json() if response.content else None
    return data["ocs"]["data"] if isinstance(data, dict) and "ocs" in data else data


def _seed(nextcloud: Nextcloud) -> dict[str, Any]:
    admin = nextcloud.admin
    nextcloud.add_note(title="Zoo", content=f"the {WORD} enclosure")
    nextcloud.put_file(admin, "Find/plain.md", f"# Notes\n\nA {WORD} in Markdown.".encode())
    nextcloud.put_file(admin, "Find/report.pdf", documents.pdf([f"page one\nthe {WORD} in a PDF"]))
    nextcloud.put_file(admin, "Find/letter.docx", documents.docx(["Dear reader,", f"a {WORD} in Word."]))
    nextcloud.put_file(admin, "Find/essay.odt", documents.odt([f"Ein {WORD} in OpenDocument."]))
    nextcloud.put_calendar_object(
        admin,
        "find-event",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:find-event\r\n"
        "DTSTAMP:20261101T090000Z\r\nDTSTART:20261201T090000Z\r\nDTEND:20261201T100000Z\r\n"
        f"SUMMARY:Keeper meeting\r\nDESCRIPTION:talk about the {WORD}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    nextcloud.put_card(
        admin,
        "find-contact.vcf",
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:find-contact\r\nFN:Wanda Keeper\r\n"
        f"NOTE:knows the {WORD}\r\nEND:VCARD\r\n",
    )
    board = _call(nextcloud, "POST", DECK, {"title": "Zoo board", "color": "0082c9"})
    stack = _call(nextcloud, "POST", f"{DECK}/{board['id']}/stacks", {"title": "To do", "order": 1})
    card = _call(
        nextcloud,
        "POST",
        f"{DECK}/{board['id']}/stacks/{stack['id']}/cards",
        {"title": "Feed", "type": "plain", "order": 1, "description": f"the {WORD} at noon"},
    )
    seeded = {"board": board["id"], "stack": stack["id"], "card": card["id"]}
    if nextcloud.major >= 34:
        made = _call(nextcloud, "POST", COLLECTIVES, {"name": "Zoo wiki"})["collective"]
        [landing] = _call(nextcloud, "GET", f"{COLLECTIVES}/{made['id']}/pages")["pages"]
        page = _call(
            nextcloud, "POST", f"{COLLECTIVES}/{made['id']}/pages/{landing['id']}", {"title": "Care"}
        )
        page = page["page"]
    else:
        page = _collective_page_29(nextcloud)
    path = "/".join(p for p in (page["collectivePath"], page["filePath"], page["fileName"]) if p)
    nextcloud.put_file(admin, path, f"# Care\n\nThe {WORD} sleeps by day.".encode())
    return seeded


def _collective_page_29(nextcloud: Nextcloud) -> dict[str, Any]:
    """A collective and a page on Collectives 2.18 (29), which has only its web page's API: a
    session and its request token. Its pages are Markdown files in the member's `Collectives/`."""
    api = "/index.php/apps/collectives/_api"
    with nextcloud.http() as client:
        token = client.get("/index.php/csrftoken").json()["token"]
        headers = {"requesttoken": token, "Accept": "application/json"}
        made = client.post(api, json={"name": "Zoo wiki"}, headers=headers)
        assert made.status_code < 300, made.text[:300]
        collective = made.json()["data"]
        [landing] = client.get(f"{api}/{collective['id']}/_pages", headers=headers).json()["data"]
        page = client.post(
            f"{api}/{collective['id']}/_pages/{landing['id']}", json={"title": "Care"}, headers=headers
        )
        assert page.status_code < 300, page.text[:300]
        return dict(page.json()["data"])


async def test_every_source_is_found_and_deletions_and_unsharing_vanish(
    apps_nextcloud: Nextcloud, store: dict[str, Any]
) -> None:
    nextcloud = apps_nextcloud
    seeded = _seed(nextcloud)
    expected = {"note", "file", "event", "contact", "card"} | ({"page"} if nextcloud.major >= 34 else set())
    with running_app(_settings(nextcloud, store)) as base:
        found = await _find(base, WORD)
        again = await _find(base, WORD)  # nothing changed: no source reads anything again
        assert again["index"]["read_now"] == 0, again["index"]
        kinds = {hit["kind"] for hit in found["hits"]}
        files = sorted(hit["title"] for hit in found["hits"] if hit["kind"] == "file")
        assert kinds == expected, found["hits"]  # the card once, not also as Deck's task
        # on 29 the Collectives page is found as the Markdown file it is (no pages API to name it)
        page_file = [] if nextcloud.major >= 34 else ["Care.md"]
        assert files == sorted(["essay.odt", "letter.docx", "plain.md", "report.pdf", *page_file])
        for hit in found["hits"]:
            assert f"«{WORD}»" in hit["excerpt"], hit
        card = next(h for h in found["hits"] if h["kind"] == "card")
        assert card["where"] == "Zoo board / To do"
        assert card["open_with"]["arguments"] == {
            "board_id": seeded["board"],
            "stack_id": seeded["stack"],
            "card_id": seeded["card"],
        }
        event = next(h for h in found["hits"] if h["kind"] == "event")
        assert event["open_with"] == {
            "tool": "nc_calendar_get_event",
            "arguments": {"calendar": "personal", "uid": "find-event"},
        }
        async with http_session(f"{base}/mcp") as session:  # other searches now answer from the index
            notes = structured(await session.call_tool("nc_notes_search_notes", {"query": WORD}))
            search = structured(await session.call_tool("nc_search", {"term": WORD, "providers": ["files"]}))
        assert (notes["answered_from"], [h["title"] for h in notes["hits"]]) == ("find index", ["Zoo"])
        assert search["from_find_index"] == ["files"]
        assert "report.pdf" in {r["title"] for r in search["results"]}
        # the owner deletes the event, the card and the DOCX: gone from the next answer
        with nextcloud.http() as client:
            assert (
                client.delete(nextcloud.calendar_path(nextcloud.admin) + "find-event.ics").status_code == 204
            )
            assert client.delete(nextcloud.dav_path(nextcloud.admin, "Find/letter.docx")).status_code == 204
        b, s, c = seeded["board"], seeded["stack"], seeded["card"]
        _call(nextcloud, "DELETE", f"{DECK}/{b}/stacks/{s}/cards/{c}")
        after = await _find(base, WORD)
        left = {hit["kind"] for hit in after["hits"]}
        assert left == expected - {"event", "card"}
        assert "letter.docx" not in {hit["title"] for hit in after["hits"]}
    # alice: none of admin's items; then admin's board shared with her and unshared mid-way
    _call(
        nextcloud,
        "POST",
        f"{DECK}/{b}/stacks/{s}/cards",
        {"title": "Shared", "type": "plain", "order": 2, "description": f"a shared {WORD}"},
    )
    # her index kept current in the background every 2 s: a share shows within the 60 s of issue 41
    with running_app(_settings(nextcloud, store, nextcloud.alice, find_background_seconds=2)) as base:
        alone = await _find(base, WORD)
        assert alone["hits"] == []
        acl = _call(
            nextcloud,
            "POST",
            f"{DECK}/{b}/acl",
            {
                "type": 0,
                "participant": "alice",
                "permissionEdit": False,
                "permissionShare": False,
                "permissionManage": False,
            },
        )
        shared = await _shown_within(base, WORD, 60.0)
        assert [(h["kind"], h["title"]) for h in shared["hits"]] == [("card", "Shared")]
        _call(nextcloud, "DELETE", f"{DECK}/{b}/acl/{acl['id']}")
        unshared = await _find(base, WORD)  # at once: the confirmation, whether or not a round ran
        assert unshared["hits"] == []
