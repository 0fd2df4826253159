"""App tools make only the requests their answer needs (issue 43; `make bench-apps` measures every
app tool on the real Nextcloud). Each test declares exactly the requests allowed: any other request
has no route and fails the test, and the routes count what was asked. No Nextcloud needed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.deck import tools_boards as deck_boards
from nextcloud_mcp_server.toolsets.forms import tools as forms_tools
from nextcloud_mcp_server.toolsets.polls import client as polls_client
from nextcloud_mcp_server.toolsets.polls import tools as polls_tools
from nextcloud_mcp_server.toolsets.reminders import tools as reminders_tools
from nextcloud_mcp_server.toolsets.status import tools as status_tools
from nextcloud_mcp_server.toolsets.talk import tools as talk_tools
from tests import http_mock
from tests.apps.replayed import replay

BASE = "https://cloud.example.com"  # as tests.apps.replayed answers
ALICE = BasicCredential("alice", "pw")
POLLS = f"{BASE}/ocs/v2.php/apps/polls/api/v1.0"
STATUS = f"{BASE}/ocs/v2.php/apps/user_status/api/v1/user_status"


def _ocs(data: Any) -> http_mock.Response:
    return http_mock.Response(200, json={"ocs": {"meta": {"status": "ok", "statuscode": 200}, "data": data}})


def _poll(poll_id: int = 7) -> dict[str, Any]:
    """As Polls 9.2 and 7.5 answer it (their creation answers alike)."""
    config = {"title": "Lunch", "description": ""}
    return {"id": poll_id, "configuration": config, "owner": {"userId": "alice"}, "status": {"created": 1}}


def _option(option_id: int, text: str) -> dict[str, Any]:
    return {
        "id": option_id,
        "pollId": 7,
        "text": text,
        "order": option_id,
        "votes": {"yes": 0, "no": 0, "maybe": 0},
    }


@pytest.fixture
async def http() -> AsyncIterator[NextcloudHTTP]:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client
    await client.aclose()


@pytest.fixture
def nextcloud(http: NextcloudHTTP, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tool call gets a new client, as each call of the server does; the process keeps what
    it keeps between calls (the Polls dialect, fresh for each test)."""

    async def nextcloud_for(ctx: Any) -> NextcloudClient:
        return NextcloudClient(http, ALICE)

    monkeypatch.setattr(polls_tools, "nextcloud_for", nextcloud_for)
    monkeypatch.setattr(status_tools, "nextcloud_for", nextcloud_for)
    monkeypatch.setattr(talk_tools, "nextcloud_for", nextcloud_for)
    monkeypatch.setattr(forms_tools, "nextcloud_for", nextcloud_for)
    monkeypatch.setattr(reminders_tools, "nextcloud_for", nextcloud_for)
    monkeypatch.setattr(deck_boards, "nextcloud_for", nextcloud_for)

    async def resolve(ctx: Any, path: str) -> tuple[None, SimpleNamespace, int]:
        return None, SimpleNamespace(path="Plans/week.md"), 20  # the file's PROPFIND, not counted here

    monkeypatch.setattr(reminders_tools, "resolve", resolve)
    monkeypatch.setattr(polls_client, "dialects", polls_client.Dialects())


@http_mock.mock
async def test_the_polls_dialect_is_asked_once_per_process(nextcloud: None) -> None:
    """Nextcloud's capabilities say which Polls API it speaks: asked by the first Polls call, not by
    every one (each asked it before: one request more per call)."""
    capabilities = http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=_ocs({"capabilities": {"polls": {"version": "9.2.0"}}})
    )
    listed = http_mock.get(f"{POLLS}/polls").mock(return_value=_ocs({"polls": [_poll()]}))
    for _ in range(3):
        answer = await polls_tools.nc_polls_list_polls(ctx=None)  # type: ignore[arg-type]
        assert [p.id for p in answer.polls] == [7]
    assert (capabilities.call_count, listed.call_count) == (1, 3)


def test_a_dialect_is_kept_for_its_seconds_and_per_nextcloud() -> None:
    now = [0.0]
    dialects = polls_client.Dialects(300, max_hosts=2, clock=lambda: now[0])
    dialects.put("https://a", True)
    dialects.put("https://b", False)
    assert (dialects.get("https://a"), dialects.get("https://b"), dialects.get("https://c")) == (
        True,
        False,
        None,
    )
    dialects.put("https://c", True)  # a third Nextcloud: the oldest answer goes
    assert dialects.get("https://a") is None
    now[0] = 300.0  # expired: asked again
    assert dialects.get("https://b") is None


@http_mock.mock
async def test_a_new_poll_is_answered_from_its_creation_and_its_options(nextcloud: None) -> None:
    """Creating a poll with two options: the poll, one request per option, then its options read
    once (after the dialect, asked once per process); no read of the poll (its creation answered
    it) nor of its votes (a new poll has none)."""
    http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=_ocs({"capabilities": {"polls": {"version": "9.2.0"}}})
    )
    made = http_mock.post(f"{POLLS}/poll").mock(return_value=_ocs({"poll": _poll()}))
    option = http_mock.post(f"{POLLS}/poll/7/option").mock(return_value=_ocs({"option": _option(1, "Pizza")}))
    options = http_mock.get(f"{POLLS}/poll/7/options").mock(
        return_value=_ocs({"options": [_option(1, "Pizza"), _option(2, "Sushi")]})
    )
    answer = await polls_tools.nc_polls_create_poll("Lunch", ["Pizza", "Sushi"], ctx=None)  # type: ignore[arg-type]
    assert (answer.id, answer.title, answer.owner, answer.votes) == (7, "Lunch", "alice", [])
    assert [o.text for o in answer.options] == ["Pizza", "Sushi"]
    assert (made.call_count, option.call_count, options.call_count) == (1, 2, 1)


@http_mock.mock
async def test_setting_the_online_status_is_one_request(nextcloud: None) -> None:
    """Nextcloud's PUT answers the whole status: the tool shows that answer, reading nothing after."""
    put = http_mock.put(f"{STATUS}/status").mock(
        return_value=_ocs(
            {"userId": "alice", "status": "away", "message": "Lunch", "icon": "🍕", "clearAt": None}
        )
    )
    answer = await status_tools.nc_status_set(ctx=None, status="away")  # type: ignore[arg-type]
    assert (answer.status, answer.message, answer.icon) == ("away", "Lunch", "🍕")
    assert put.call_count == 1


@http_mock.mock
async def test_a_talk_post_reads_its_conversation_once(nextcloud: None) -> None:
    """Posting (Talk 24's recorded answers): the conversation (may the user post, who reads it),
    its participants and bots, then the post; the conversation was read twice before. Each
    recorded answer is given once: a second read fails the test."""
    replay("34", "talk_conversation")
    replay("34", "talk_participants")
    bots = http_mock.get(f"{BASE}/ocs/v2.php/apps/spreed/api/v1/bot/tok1").mock(return_value=_ocs([]))
    replay("34", "talk_post")
    answer = await talk_tools.nc_talk_post_message("tok1", "Train at 9, @admin?", ctx=None)  # type: ignore[arg-type]
    assert answer.token == "tok1"
    assert "Train at 9" in answer.message.text
    assert bots.call_count == 1


@http_mock.mock
async def test_a_forms_submissions_are_named_by_its_questions_in_one_request(nextcloud: None) -> None:
    """Forms answers the submissions with the form's questions (4.3 and 5.3 alike): the answers are
    named by question text without reading the form first (that was one request more)."""
    question = {"id": 3, "formId": 2, "order": 1, "type": "short", "isRequired": False, "text": "Name?"}
    given = {"id": 9, "userId": "alice", "timestamp": 1, "answers": [{"questionId": 3, "text": "Alice"}]}
    listed = http_mock.get(f"{BASE}/ocs/v2.php/apps/forms/api/v3/forms/2/submissions").mock(
        return_value=_ocs({"submissions": [given], "questions": [question]})
    )
    answer = await forms_tools.nc_forms_list_submissions(2, ctx=None)  # type: ignore[arg-type]
    assert [s.answers for s in answer.submissions] == [{"Name?": ["Alice"]}]
    assert listed.call_count == 1


@http_mock.mock
async def test_a_reminder_is_set_and_removed_without_reading_it_back(nextcloud: None) -> None:
    """files_reminders' PUT answers nothing and keeps the time to the second: the reminder is sent
    as it is kept and answered as sent (it was read back: one request more). Removing reads
    whether there is one (its DELETE answers 404 otherwise), then deletes."""
    reminder = f"{BASE}/ocs/v2.php/apps/files_reminders/api/v1/20"
    put = http_mock.put(reminder).mock(return_value=_ocs([]))
    due = datetime.now(UTC) + timedelta(days=2)
    answer = await reminders_tools.nc_reminders_set("Plans/week.md", ctx=None, due=due)  # type: ignore[arg-type]
    kept = due.replace(microsecond=0)
    assert answer.due == kept.isoformat()
    assert put.call_count == 1
    assert json.loads(put.calls.last.request.content) == {"dueDate": kept.isoformat()}
    read = http_mock.get(reminder).mock(return_value=_ocs({"dueDate": kept.isoformat()}))
    gone = http_mock.request("DELETE", reminder).mock(return_value=_ocs([]))
    removed = await reminders_tools.nc_reminders_set("Plans/week.md", ctx=None, due=None)  # type: ignore[arg-type]
    assert removed.due is None
    assert (read.call_count, gone.call_count, put.call_count) == (1, 1, 1)


@http_mock.mock
async def test_a_new_deck_board_is_answered_from_what_deck_answered(nextcloud: None) -> None:
    """A board with two stacks and a label: Deck's answers to the four POSTs make the answer (its
    board comes with the default labels and no stacks, on 1.13 and 1.18 alike); the board and its
    stacks were read back (two requests more)."""
    deck = f"{BASE}/index.php/apps/deck/api/v1.0/boards"
    default = [
        {"id": 1, "title": "Finished", "color": "31CC7C"},
        {"id": 2, "title": "Later", "color": "317CCC"},
    ]
    board = {"id": 5, "title": "Trip", "color": "0082c9", "archived": False, "labels": default, "stacks": []}
    made = http_mock.post(deck).mock(return_value=http_mock.Response(200, json=board))
    stacks = http_mock.post(f"{deck}/5/stacks").mock(
        side_effect=[
            http_mock.Response(200, json={"id": 8, "title": "To do", "boardId": 5, "order": 0}),
            http_mock.Response(200, json={"id": 9, "title": "Done", "boardId": 5, "order": 1}),
        ]
    )
    labels = http_mock.post(f"{deck}/5/labels").mock(
        return_value=http_mock.Response(200, json={"id": 3, "title": "Tickets", "color": "F1DB50"})
    )
    answer = await deck_boards.nc_deck_create_board(
        "Trip",
        ctx=None,  # type: ignore[arg-type]
        stacks=["To do", "Done"],
        labels=["Tickets"],
    )
    assert [(s.id, s.title) for s in answer.stacks] == [(8, "To do"), (9, "Done")]
    assert answer.labels == ["Finished", "Later", "Tickets"]
    assert (answer.id, answer.title, answer.archived) == (5, "Trip", False)
    assert (made.call_count, stacks.call_count, labels.call_count) == (1, 2, 1)
