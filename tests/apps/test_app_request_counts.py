"""App tools make only the requests their answer needs (issue 43; `make bench-apps` measures every
app tool on the real Nextcloud). Each test declares exactly the requests allowed: any other request
has no route and fails the test, and the routes count what was asked. No Nextcloud needed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.toolsets.collectives import tools as collectives_tools
from nextcloud_mcp_server.toolsets.collectives import tools_common as collectives_common
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient
from nextcloud_mcp_server.toolsets.deck import tools_boards as deck_boards
from nextcloud_mcp_server.toolsets.forms import tools as forms_tools
from nextcloud_mcp_server.toolsets.polls import client as polls_client
from nextcloud_mcp_server.toolsets.polls import tools as polls_tools
from nextcloud_mcp_server.toolsets.reminders import tools as reminders_tools
from nextcloud_mcp_server.toolsets.status import tools as status_tools
from nextcloud_mcp_server.toolsets.talk import tools as talk_tools
from tests import http_mock
from tests.apps.answers import ALICE, BASE, POLLS, ocs, option, poll
from tests.apps.replayed import replay

STATUS = f"{BASE}/ocs/v2.php/apps/user_status/api/v1/user_status"


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

    async def collectives_for(ctx: Any) -> CollectivesClient:
        return CollectivesClient(OCSClient(http, ALICE), WebDAVClient(http, ALICE, "alice"))

    monkeypatch.setattr(collectives_tools, "_client", collectives_for)

    async def resolve(ctx: Any, path: str) -> tuple[None, SimpleNamespace, int]:
        return None, SimpleNamespace(path="Plans/week.md"), 20  # the file's PROPFIND, not counted here

    monkeypatch.setattr(reminders_tools, "resolve", resolve)
    monkeypatch.setattr(polls_client, "dialects", polls_client.Dialects())


@http_mock.mock
async def test_the_polls_dialect_is_asked_once_per_process(nextcloud: None) -> None:
    """Nextcloud's capabilities say which Polls API it speaks: asked by the first Polls call, not by
    every one (each asked it before: one request more per call)."""
    capabilities = http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=ocs({"capabilities": {"polls": {"version": "9.2.0"}}})
    )
    listed = http_mock.get(f"{POLLS}/polls").mock(return_value=ocs({"polls": [poll()]}))
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
    """Creating a poll with two options: the poll, then one request per option, each answering
    its option (Polls 9.2 and 7.5 alike), after the dialect asked once per process; nothing is
    read back (the options were read after their creation: one request more)."""
    http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=ocs({"capabilities": {"polls": {"version": "9.2.0"}}})
    )
    made = http_mock.post(f"{POLLS}/poll").mock(return_value=ocs({"poll": poll()}))
    added = http_mock.post(f"{POLLS}/poll/7/option").mock(
        side_effect=[ocs({"option": option(1, "Pizza")}), ocs({"option": option(2, "Sushi")})]
    )
    answer = await polls_tools.nc_polls_create_poll("Lunch", ["Pizza", "Sushi"], ctx=None)  # type: ignore[arg-type]
    assert (answer.id, answer.title, answer.owner, answer.votes) == (7, "Lunch", "alice", [])
    assert [(o.id, o.text, o.yes) for o in answer.options] == [(1, "Pizza", 0), (2, "Sushi", 0)]
    assert [json.loads(c.request.content) for c in added.calls] == [
        {"option": {"text": "Pizza"}},
        {"option": {"text": "Sushi"}},
    ]
    assert (made.call_count, added.call_count) == (1, 2)


@http_mock.mock
async def test_setting_the_online_status_is_one_request(nextcloud: None) -> None:
    """Nextcloud's PUT answers the whole status: the tool shows that answer, reading nothing after."""
    put = http_mock.put(f"{STATUS}/status").mock(
        return_value=ocs(
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
    bots = http_mock.get(f"{BASE}/ocs/v2.php/apps/spreed/api/v1/bot/tok1").mock(return_value=ocs([]))
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
        return_value=ocs({"submissions": [given], "questions": [question]})
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
    put = http_mock.put(reminder).mock(return_value=ocs([]))
    due = datetime.now(UTC) + timedelta(days=2)
    answer = await reminders_tools.nc_reminders_set("Plans/week.md", ctx=None, due=due)  # type: ignore[arg-type]
    kept = due.replace(microsecond=0)
    assert answer.due == kept.isoformat()
    assert put.call_count == 1
    assert json.loads(put.calls.last.request.content) == {"dueDate": kept.isoformat()}
    read = http_mock.get(reminder).mock(return_value=ocs({"dueDate": kept.isoformat()}))
    gone = http_mock.request("DELETE", reminder).mock(return_value=ocs([]))
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


@http_mock.mock
async def test_a_new_form_is_answered_from_what_forms_answered(nextcloud: None) -> None:
    """A form with a text question and a choice question: the form's POST and PATCH, a POST per
    question and one of the choices, whose answers (Forms 4.3 and 5.3 alike) make the answer; the
    form was read back (one request more)."""
    forms = f"{BASE}/ocs/v2.php/apps/forms/api/v3/forms"
    empty = {"id": 4, "title": "", "description": "", "ownerId": "alice", "questions": []}
    made = http_mock.post(forms).mock(return_value=ocs(empty))
    titled = http_mock.request("PATCH", f"{forms}/4").mock(return_value=ocs(4))

    def question(number: int, kind: str, text: str) -> dict[str, Any]:
        return {"id": number, "formId": 4, "order": number, "type": kind, "isRequired": False, "text": text}

    asked = http_mock.post(f"{forms}/4/questions").mock(
        side_effect=[ocs(question(1, "short", "Name?")), ocs(question(2, "multiple", "Food?"))]
    )
    choices = http_mock.post(f"{forms}/4/questions/2/options").mock(
        return_value=ocs(
            [{"id": 5, "questionId": 2, "text": "Pizza"}, {"id": 6, "questionId": 2, "text": "Sushi"}]
        )
    )
    answer = await forms_tools.nc_forms_create_form(
        "Lunch",
        [
            forms_tools.QuestionIn(text="Name?"),
            forms_tools.QuestionIn(text="Food?", type="multiple", options=["Pizza", "Sushi"]),
        ],
        ctx=None,  # type: ignore[arg-type]
        description="Who eats what",
    )
    assert (answer.id, answer.title, answer.description) == (4, "Lunch", "Who eats what")
    assert [(q.id, q.type, q.text, q.options) for q in answer.questions] == [
        (1, "short", "Name?", []),
        (2, "multiple", "Food?", ["Pizza", "Sushi"]),
    ]
    assert json.loads(titled.calls.last.request.content) == {
        "keyValuePairs": {"title": "Lunch", "description": "Who eats what"}
    }
    assert (made.call_count, titled.call_count, asked.call_count, choices.call_count) == (1, 1, 2, 1)


COLLECTIVE = f"{BASE}/ocs/v2.php/apps/collectives/api/v1.0/collectives/1/pages"
PAGE_FILE = f"{BASE}/remote.php/dav/files/alice/.Collectives/Wiki/Plan.md"
MADE = 1_795_882_669  # the page's time, as Collectives 4.5 answers it (its file's mtime)


def _page(size: int | None) -> dict[str, Any]:
    """As Collectives 4.5 answers a page: its time and size, no ETag."""
    page = {"id": 31, "title": "Plan", "parentId": 29, "timestamp": MADE, "fileName": "Plan.md"}
    return (
        page
        | {"collectivePath": ".Collectives/Wiki", "filePath": ""}
        | ({} if size is None else {"size": size})
    )


@http_mock.mock
async def test_a_new_page_with_text_is_written_without_reading_it_first(nextcloud: None) -> None:
    """The page's POST, then its text PUT unless the file changed after the second it was made
    (Collectives answers the time, not the ETag); the PUT answers the ETag. The file was read
    for its ETag between the two (one request more)."""
    made = http_mock.post(f"{COLLECTIVE}/29").mock(return_value=ocs({"page": _page(0)}))
    put = http_mock.put(PAGE_FILE).mock(return_value=http_mock.Response(204, headers={"ETag": '"e2"'}))
    answer = await collectives_tools.nc_collectives_create_page(
        1,
        "Plan",
        ctx=None,  # type: ignore[arg-type]
        parent_id=29,
        content="# Plan",
    )
    assert (answer.id, answer.content, answer.etag) == (31, "# Plan", "e2")
    sent = put.calls.last.request
    assert sent.headers["If-Unmodified-Since"] == "Sat, 28 Nov 2026 16:17:49 GMT"
    assert "If-Match" not in sent.headers
    assert (made.call_count, put.call_count) == (1, 1)


@http_mock.mock
async def test_an_edit_that_keeps_most_of_a_page_is_one_read_and_the_put(nextcloud: None) -> None:
    """An edit that surely removes nothing (the new text is at least half the page's size, as
    Collectives answers it): the page, then the PUT against the model's etag; the file was read
    first (one request more). A page changed since is refused by Nextcloud and answered with its
    current text, nothing written."""
    page = http_mock.get(f"{COLLECTIVE}/31").mock(return_value=ocs({"page": _page(10)}))
    put = http_mock.put(PAGE_FILE).mock(return_value=http_mock.Response(204, headers={"ETag": '"e3"'}))
    edited = await collectives_tools.nc_collectives_edit_page(1, 31, '"e2"', "# Plan, now", ctx=None)  # type: ignore[arg-type]
    assert edited.structured_content is not None
    assert (edited.structured_content["etag"], edited.structured_content["content"]) == ("e3", "# Plan, now")
    assert put.calls.last.request.headers["If-Match"] == '"e2"'
    assert (page.call_count, put.call_count) == (1, 1)

    put.mock(return_value=http_mock.Response(412))
    current = http_mock.get(PAGE_FILE).mock(
        return_value=http_mock.Response(200, content=b"# Phone edit", headers={"ETag": '"e4"'})
    )
    stale = await collectives_tools.nc_collectives_edit_page(1, 31, '"e2"', "# Plan, again", ctx=None)  # type: ignore[arg-type]
    assert stale.is_error
    assert "nothing was overwritten" in str(stale.content[0])
    assert stale.meta is not None
    assert "# Phone edit" in json.dumps(stale.meta)
    assert (page.call_count, put.call_count, current.call_count) == (2, 2, 1)


def test_an_edit_reads_the_page_first_when_it_may_remove_content() -> None:
    """The rule that decides the request saved above: a page of unknown size, or an edit to less
    than half of its bytes in characters, or emptying, is read (and may be asked)."""
    keeps = collectives_common.keeps_most
    assert (keeps(None, "x" * 100), keeps(0, ""), keeps(10, "12345"), keeps(10, "1234")) == (
        False,
        True,
        True,
        False,
    )
    assert (keeps(10, "   "), keeps(9, "abcd"), keeps(8, "éé"), keeps(8, "é")) == (False, True, False, False)
    assert keeps(-4, "x") is False  # a size no file has: not sure, read


@http_mock.mock
async def test_a_new_page_refused_by_its_second_is_written_if_still_empty(nextcloud: None) -> None:
    """A Nextcloud whose file time is a second later than Collectives said refuses the PUT (412):
    the file is read, and written against its ETag while it is still empty."""
    http_mock.post(f"{COLLECTIVE}/29").mock(return_value=ocs({"page": _page(0)}))
    put = http_mock.put(PAGE_FILE).mock(
        side_effect=[http_mock.Response(412), http_mock.Response(204, headers={"ETag": '"e5"'})]
    )
    read = http_mock.get(PAGE_FILE).mock(
        return_value=http_mock.Response(200, content=b"", headers={"ETag": '"e1"'})
    )
    answer = await collectives_tools.nc_collectives_create_page(
        1,
        "Plan",
        ctx=None,  # type: ignore[arg-type]
        parent_id=29,
        content="# Plan",
    )
    assert (answer.content, answer.etag) == ("# Plan", "e5")
    assert put.calls.last.request.headers["If-Match"] == '"e1"'
    assert (put.call_count, read.call_count) == (2, 1)
