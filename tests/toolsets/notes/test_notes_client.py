"""Unit tests of the Notes API client: paging, conflicts, append, the Bearer refusal, ranking."""

from __future__ import annotations

import json

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential
from nextcloud_mcp_server.nextcloud.errors import BearerRefused, InvalidResponse, NotFound, Unauthorized
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import Note
from nextcloud_mcp_server.toolsets.notes.client import (
    InvalidNoteInput,
    NoteConflict,
    NotesClient,
    check_category,
    check_content,
    check_title,
    quote_etag,
    rank_notes,
)
from tests import http_mock
from tests.recordings import load

BASE = "https://cloud.example.com"
API = f"{BASE}/index.php/apps/notes/api/v1"
ALICE = BasicCredential("alice", "pw-alice")


def note(note_id: int, **fields: object) -> dict[str, object]:
    return {
        "id": note_id,
        "title": f"n{note_id}",
        "category": "",
        "modified": note_id,
        "etag": f"e{note_id}",
        **fields,
    }


@pytest.fixture
async def http() -> NextcloudHTTP:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client  # type: ignore[misc]
    await client.aclose()


@http_mock.mock
async def test_listing_follows_the_chunk_cursor_until_it_is_absent(http: NextcloudHTTP) -> None:
    """Chunks are requested with the cursor of the previous answer; a repeated id is yielded once."""
    route = http_mock.get(f"{API}/notes").mock(
        side_effect=[
            http_mock.Response(200, json=[note(1), note(2)], headers={"X-Notes-Chunk-Cursor": "c1"}),
            http_mock.Response(200, json=[note(3), {"id": 1}]),
        ]
    )
    notes = await NotesClient(http, ALICE).list_notes(category="Work")
    assert [n.id for n in notes] == [1, 2, 3]
    first, second = (call.request.url.query for call in route.calls)
    assert (first.get("chunkCursor"), first["category"], first["exclude"]) == (None, "Work", "content")
    assert second["chunkCursor"] == "c1"


@http_mock.mock
async def test_a_list_that_is_not_a_list_is_an_invalid_response(http: NextcloudHTTP) -> None:
    """A JSON object where a list of notes belongs is reported, not iterated."""
    http_mock.get(f"{API}/notes").mock(return_value=http_mock.Response(200, json={"oops": True}))
    with pytest.raises(InvalidResponse, match="list of notes"):
        await NotesClient(http, ALICE).list_notes()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<html>maintenance</html>", "expected JSON but got text/html"),
        (b"[" * 300 + b"]" * 300, "nested too deeply"),
        (json.dumps([note(1), note(2, id="two")]).encode(), r"malformed note \(1\.id: "),
        (json.dumps([note(1), "a note"]).encode(), r"malformed note \(1: "),
        (json.dumps([note(1, modified=-5)]).encode(), r"malformed note \(0\.modified: "),
        (json.dumps([note(1, modified=253_402_300_800)]).encode(), r"malformed note \(0\.modified: "),
    ],
)
@http_mock.mock
async def test_a_listing_nextcloud_garbled_is_an_invalid_response_naming_the_fault(
    http: NextcloudHTTP, body: bytes, said: str
) -> None:
    """Not JSON, too deep, or a note without a note's fields: one clear error, not a crash."""
    http_mock.get(f"{API}/notes").mock(
        return_value=http_mock.Response(200, content=body, headers={"Content-Type": "text/html"})
    )
    with pytest.raises(InvalidResponse, match=said):
        await NotesClient(http, ALICE).list_notes()


@http_mock.mock
async def test_the_last_second_iso_8601_can_show_is_still_a_note(http: NextcloudHTTP) -> None:
    http_mock.get(f"{API}/notes").mock(
        return_value=http_mock.Response(200, json=[note(1, modified=0), note(2, modified=253_402_300_799)])
    )
    notes = await NotesClient(http, ALICE).list_notes()
    assert [n.modified for n in notes] == [0, 253_402_300_799]


@http_mock.mock
async def test_stale_etag_raises_conflict_carrying_the_recorded_current_note(http: NextcloudHTTP) -> None:
    """The 412 body recorded from a real Nextcloud becomes `NoteConflict.current`."""
    recorded = load("notes_update_ifmatch_stale")
    route = http_mock.put(f"{API}/notes/77").mock(return_value=http_mock.Response(412, text=recorded.body))
    with pytest.raises(NoteConflict) as caught:
        await NotesClient(http, ALICE).update(
            77, etag="807d5e4428cd4bf785ce449e3bb1cb05", content="stale write"
        )
    assert caught.value.current.etag == "558cb2dfe8e0b0ac40e8261e09cf2191"
    assert caught.value.current.category == "Work/Sub"
    assert route.calls[0].request.headers["If-Match"] == '"807d5e4428cd4bf785ce449e3bb1cb05"'
    assert json.loads(route.calls[0].request.content) == {"content": "stale write"}


@http_mock.mock
async def test_append_redoes_the_write_on_the_newer_version_after_a_conflict(http: NextcloudHTTP) -> None:
    """Someone else's edit between read and write is kept: the append is re-applied on top of it."""
    http_mock.get(f"{API}/notes/5").mock(return_value=http_mock.Response(200, json=note(5, content="a")))
    put = http_mock.put(f"{API}/notes/5").mock(
        side_effect=[
            http_mock.Response(412, json=note(5, content="a\nb", etag="e5b")),
            http_mock.Response(200, json=note(5, content="a\nb\nc", etag="e5c")),
        ]
    )
    result = await NotesClient(http, ALICE).append(5, "c")
    assert result.content == "a\nb\nc"
    assert [json.loads(c.request.content)["content"] for c in put.calls] == ["a\nc", "a\nb\nc"]
    assert put.calls[1].request.headers["If-Match"] == '"e5b"'


@http_mock.mock
async def test_append_over_the_size_limit_writes_nothing(http: NextcloudHTTP) -> None:
    """The limit applies to the note after appending; no PUT is sent when it would be exceeded."""
    http_mock.get(f"{API}/notes/5").mock(return_value=http_mock.Response(200, json=note(5, content="x" * 10)))
    put = http_mock.put(f"{API}/notes/5").mock(return_value=http_mock.Response(200, json=note(5)))
    with pytest.raises(InvalidNoteInput, match="over the limit of 12"):
        await NotesClient(http, ALICE).append(5, "yyy", max_bytes=12)
    assert put.call_count == 0


@http_mock.mock
async def test_unknown_note_is_a_not_found_naming_the_id(http: NextcloudHTTP) -> None:
    """The recorded 404 body of a real Nextcloud becomes 'note N does not exist'."""
    recorded = load("notes_get_404")
    http_mock.get(f"{API}/notes/999999").mock(return_value=http_mock.Response(404, text=recorded.body))
    with pytest.raises(NotFound, match="note 999999 does not exist"):
        await NotesClient(http, ALICE).get(999999)


@http_mock.mock
async def test_bearer_refused_by_the_notes_api_is_retried_as_basic(http: NextcloudHTTP) -> None:
    """Nextcloud's 'CORS requires basic auth' answer leads to one retry with the token as password."""
    recorded = load("oauth2_bearer_notes_list")
    route = http_mock.get(f"{API}/notes").mock(
        side_effect=[
            http_mock.Response(401, text=recorded.body),
            http_mock.Response(200, json=[]),
            http_mock.Response(200, json=[]),
        ]
    )
    client = NotesClient(http, BearerCredential("oauth-token-123", "alice"))
    assert await client.list_notes() == []
    assert await client.list_notes() == []
    sent = [c.request.headers["authorization"] for c in route.calls]
    assert sent == [
        "Bearer oauth-token-123",
        BasicCredential("alice", "oauth-token-123").authorization(),
        BasicCredential("alice", "oauth-token-123").authorization(),
    ]


@http_mock.mock
async def test_bearer_refused_both_ways_explains_the_nextcloud_limitation(http: NextcloudHTTP) -> None:
    """When the Basic retry is refused too, the error says why and what to configure."""
    recorded = load("oauth2_bearer_notes_list")
    http_mock.get(f"{API}/notes").mock(
        side_effect=[
            http_mock.Response(401, text=recorded.body),
            http_mock.Response(401, text='{"message":""}'),
        ]
    )
    with pytest.raises(
        BearerRefused, match="refuses OAuth Bearer tokens .* NEXTCLOUD_CONSENT_PROVIDER"
    ) as got:
        await NotesClient(http, BearerCredential("tok", "alice")).list_notes()
    assert not isinstance(got.value, Unauthorized)  # a limitation, not a revoked credential


@pytest.mark.parametrize(
    "credential",
    [ALICE, BearerCredential("oauth2-token", "alice", basic_for_notes=True)],
    ids=["app password", "token known to work as a password"],
)
@http_mock.mock
async def test_a_password_refused_with_the_cors_message_is_a_rejected_credential(
    http: NextcloudHTTP, credential: BasicCredential | BearerCredential
) -> None:
    """Nextcloud 29 also answers 'CORS requires basic auth' when the Basic login fails, e.g. for an
    app password deleted a moment ago (seen at its token cache's expiry): that is `Unauthorized`,
    so offline access asks for consent again, not the Bearer limitation."""
    recorded = load("oauth2_bearer_notes_list")
    route = http_mock.get(f"{API}/notes").mock(return_value=http_mock.Response(401, text=recorded.body))
    with pytest.raises(Unauthorized) as got:
        await NotesClient(http, credential).list_notes()
    assert not isinstance(got.value, BearerRefused)
    assert route.call_count == 1
    assert route.calls[0].request.headers["authorization"].startswith("Basic ")


@http_mock.mock
async def test_a_plain_401_is_not_retried_for_basic_credentials(http: NextcloudHTTP) -> None:
    """Wrong Basic credentials fail once; there is nothing to fall back to."""
    route = http_mock.get(f"{API}/notes").mock(return_value=http_mock.Response(401, text='{"message":""}'))
    with pytest.raises(Unauthorized, match="credentials were rejected"):
        await NotesClient(http, ALICE).list_notes()
    assert route.call_count == 1


def test_title_matches_rank_above_content_matches() -> None:
    """A title hit outranks any content hit; a phrase in the title outranks scattered words."""
    notes = [
        Note(id=1, title="Shopping", content="buy milk and bread", modified=3),
        Note(id=2, title="Milk prices", content="rising", modified=1),
        Note(id=3, title="Bread and milk", content="", modified=2),
        Note(id=4, title="Unrelated", content="nothing here", modified=4),
        Note(id=5, title="Milk", content="no second word", modified=5),
    ]
    hits = rank_notes(notes, "milk bread")
    assert [h.id for h in hits] == [3, 1]
    assert [h.matched_in for h in hits] == ["title", "content"]
    single = rank_notes(notes, "MÍLK")
    assert [h.id for h in single] == [5, 3, 2, 1]  # equal title hits: newest first
    assert "milk" in single[-1].snippet


@pytest.mark.parametrize(
    ("value", "message"),
    [("", "must not be empty"), ("a\tb", "control"), ("x" * 201, "at most 200")],
)
def test_bad_titles_are_refused(value: str, message: str) -> None:
    with pytest.raises(InvalidNoteInput, match=message):
        check_title(value)


@pytest.mark.parametrize("value", ["..", "a/../b", "a//b", "/a", "a/", "a\\b", "a/./b", "x\x00"])
def test_bad_categories_are_refused(value: str) -> None:
    with pytest.raises(InvalidNoteInput):
        check_category(value)


def test_good_inputs_are_normalised() -> None:
    assert check_title("  Groceries  ") == "Groceries"
    assert check_category(" Work / Projects ") == "Work/Projects"
    assert check_category("") == ""
    assert check_content("é" * 5, 10) == "é" * 5
    with pytest.raises(InvalidNoteInput, match="11 bytes"):
        check_content("é" * 5 + "x", 10)
    assert quote_etag('"abc"') == quote_etag("abc") == '"abc"'
