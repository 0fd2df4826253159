"""Consent to indexing in multi-user mode (docs/ADR/0084), end to end over MCP with offline access:
a real IdP, the server over streamable HTTP, a real SQLite store and index, the Nextcloud double.
The person is asked once, in a form that says what is kept, where and how to remove it; their
answer is kept sealed with their grant; agreed, their index is kept current in the background;
declined, nc_find answers from Nextcloud's own search and says so; a client that cannot ask
indexes nothing; revoking the grant deletes the index."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestFormParams, ElicitResult

from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import oauth_server
from tests.offline import OfflineServer, offline_server, provision
from tests.oidc import IdP

pytestmark = pytest.mark.integration


@pytest.fixture
def server(double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path) -> Iterator[OfflineServer]:
    with offline_server(
        double,
        double_url,
        idp,
        tmp_path / "store.sqlite3",
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "find-index.sqlite3",
        find_meaning="off",
        find_background_seconds=1,
    ) as running:
        yield running


@dataclass
class Person:
    """Answers the question whether their Nextcloud may be indexed, as the test says."""

    action: str = "accept"
    agree: bool = True
    questions: list[str] = field(default_factory=list)

    async def answer(self, context: Any, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        self.questions.append(params.message)
        if self.action != "accept":
            return ElicitResult(action=self.action)  # type: ignore[arg-type]
        return ElicitResult(action="accept", content={"agree": self.agree})


async def _items(server: OfflineServer, user: str) -> dict[str, int]:
    index = SQLiteIndex(server.settings.find_index_path or Path("none"))
    await index.open()
    try:
        return (await index.status(user)).items
    finally:
        await index.close()


def _consent_row(server: OfflineServer, user: str) -> Any:
    rows = server.store_rows("SELECT find_consent FROM grants WHERE subject = ?", user)
    return rows[0][0] if rows else "no grant"


async def test_agreeing_once_indexes_keeps_it_current_in_the_background_and_revoking_deletes_it(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    await provision(server, "alice")
    (double.user_files("alice") / "diary.md").write_text("the walrus tusk")
    person = Person()
    async with http_session(
        server.mcp, headers=server.headers("alice"), elicitation_callback=person.answer
    ) as s:
        first = structured(await s.call_tool("nc_find", {"query": "walrus"}))
        again = structured(await s.call_tool("nc_find", {"query": "tusk"}))
        (double.user_files("alice") / "later.md").write_text("a narwhal came")
        changed_at = time.monotonic()
        while True:  # nc_find_status reads no content from Nextcloud: only the background can add
            status = structured(await s.call_tool("nc_find_status", {}))
            if status["items"].get("file", 0) >= 2 or time.monotonic() - changed_at > 60:
                break
            await anyio.sleep(0.2)  # between polls
        seen_after = time.monotonic() - changed_at
        later = structured(await s.call_tool("nc_find", {"query": "narwhal"}))
        sealed = _consent_row(server, "alice")
        revoked = structured(await s.call_tool("revoke_nextcloud_access", {}))
    assert len(person.questions) == 1  # asked once
    question = person.questions[0]
    for said in (
        "keep an index",
        "on this server",
        "nc_find_forget",
        "disconnecting your Nextcloud deletes it",
    ):
        assert said in question
    assert "background" in question
    assert [h["uri"] for h in first["hits"]] == ["nextcloud://files/diary.md"]
    assert first["answered_from"] == "index"
    assert [h["uri"] for h in again["hits"]] == ["nextcloud://files/diary.md"]
    assert seen_after <= 60, seen_after
    assert [h["uri"] for h in later["hits"]] == ["nextcloud://files/later.md"]
    assert later["index"]["read_now"] == 0  # the background had read it
    assert sealed is not None
    assert "agreed" not in sealed  # sealed, not written plainly
    raw = b"".join(p.read_bytes() for p in server.settings.store_path.parent.glob("store.sqlite3*"))
    assert b'"answer"' not in raw  # the audit trail says find_index_agreed; the answer itself is sealed
    assert revoked["revoked"] is True
    assert server.grants() == []
    assert await _items(server, "alice") == {}
    events = [r[0] for r in server.store_rows("SELECT event FROM audit WHERE subject = 'alice' ORDER BY id")]
    assert "find_index_agreed" in events


async def test_declining_answers_from_nextclouds_search_until_the_answer_is_forgotten(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    await provision(server, "alice")
    (double.user_files("alice") / "walrus-notes.md").write_text("the walrus tusk")
    person = Person(agree=False)
    async with http_session(
        server.mcp, headers=server.headers("alice"), elicitation_callback=person.answer
    ) as s:
        declined = structured(await s.call_tool("nc_find", {"query": "walrus"}))
        by_contents = structured(await s.call_tool("nc_find", {"query": "tusk"}))
        items_declined = await _items(server, "alice")
        structured(await s.call_tool("nc_find_forget", {}))
        person.agree = True
        agreed = structured(await s.call_tool("nc_find", {"query": "tusk"}))
    assert len(person.questions) == 2  # declined once (remembered), asked again after forgetting
    assert declined["answered_from"] == "nextcloud search"
    assert "declined" in declined["note"]
    assert [h["uri"] for h in declined["hits"]] == ["nextcloud://files/walrus-notes.md"]  # by its name
    assert by_contents["hits"] == []  # Nextcloud's search does not read contents
    assert items_declined == {}  # nothing was indexed
    assert agreed["answered_from"] == "index"
    assert [h["uri"] for h in agreed["hits"]] == ["nextcloud://files/walrus-notes.md"]
    events = [r[0] for r in server.store_rows("SELECT event FROM audit WHERE subject = 'alice' ORDER BY id")]
    assert [e for e in events if e.startswith("find_index_")] == [
        "find_index_refused",
        "find_index_withdrawn",
        "find_index_agreed",
    ]


async def test_a_client_that_cannot_ask_or_a_dismissed_question_indexes_nothing(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    await provision(server, "alice")
    (double.user_files("alice") / "diary.md").write_text("the walrus tusk")
    async with http_session(server.mcp, headers=server.headers("alice")) as s:
        no_forms = structured(await s.call_tool("nc_find", {"query": "walrus"}))
    person = Person(action="cancel")
    async with http_session(
        server.mcp, headers=server.headers("alice"), elicitation_callback=person.answer
    ) as s:
        dismissed = structured(await s.call_tool("nc_find", {"query": "walrus"}))
        dismissed_again = structured(await s.call_tool("nc_find", {"query": "walrus"}))
    assert "cannot ask you" in no_forms["note"]
    assert "dismissed" in dismissed["note"]
    assert dismissed_again["answered_from"] == "nextcloud search"
    assert len(person.questions) == 2  # a dismissed question is asked again
    assert _consent_row(server, "alice") is None  # nothing remembered
    assert await _items(server, "alice") == {}


async def test_a_2026_client_is_asked_in_an_input_required_result(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    await provision(server, "alice")
    (double.user_files("alice") / "diary.md").write_text("the walrus tusk")
    person = Person()
    async with (
        httpx2.AsyncClient(headers=server.headers("alice"), timeout=30) as http,
        Client(
            streamable_http_client(server.mcp, http_client=http), elicitation_callback=person.answer
        ) as client,
    ):
        assert client.session.protocol_version >= "2026-07-28"
        result = await client.call_tool("nc_find", {"query": "walrus"})
    found = structured(result)
    assert len(person.questions) == 1
    assert [h["uri"] for h in found["hits"]] == ["nextcloud://files/diary.md"]
    assert _consent_row(server, "alice") is not None


async def test_in_pass_through_mode_the_answer_is_kept_in_the_persons_index(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """No grant is stored in pass-through mode: the answer lives in the person's own index and goes
    with it (nc_find_forget asks again); nothing is kept current in the background there."""
    (double.user_files("alice") / "diary.md").write_text("the walrus tusk")
    person = Person(agree=False)
    with oauth_server(
        double,
        double_url,
        idp,
        nextcloud_mcp_toolsets="default,find",
        find_index_path=tmp_path / "find-index.sqlite3",
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",
    ) as server:
        headers = {"Authorization": f"Bearer {idp.access_token(user='alice', resource=server.mcp)}"}
        async with http_session(server.mcp, headers=headers, elicitation_callback=person.answer) as s:
            declined = structured(await s.call_tool("nc_find", {"query": "tusk"}))
            again = structured(await s.call_tool("nc_find", {"query": "tusk"}))
            structured(await s.call_tool("nc_find_forget", {}))
            person.agree = True
            agreed = structured(await s.call_tool("nc_find", {"query": "tusk"}))
    assert len(person.questions) == 2
    assert "background" not in person.questions[0]  # nothing is kept current without a credential
    assert (declined["answered_from"], again["answered_from"]) == ("nextcloud search", "nextcloud search")
    assert [h["uri"] for h in agreed["hits"]] == ["nextcloud://files/diary.md"]
    assert not (tmp_path / "store.sqlite3").exists()  # no store in pass-through mode
