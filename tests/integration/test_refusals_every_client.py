"""Refusals reach the model through every client (issue 33, item 1): each tool that can ask the
human, declined, cancelled, and called by a client that cannot ask, through the TypeScript SDK's
client (which checks error results against the output schema too) and the Python SDK's client
(checked here by the same rule), against both Nextclouds; and the other ways a call is refused.
Nothing asked about may change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from nextcloud_mcp_server.tools._results import ERROR_META_KEY
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app
from tests.strict_clients import strict_problem, text_of
from tests.targets import cases
from tests.ts_client import TypeScriptClient, typescript_client

pytestmark = pytest.mark.integration

SECRET = "PIN 4711, do not share"
EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//phone//EN\r\nBEGIN:VEVENT\r\nUID:dentist\r\n"
    "DTSTAMP:20261101T080000Z\r\nDTSTART:20261204T090000Z\r\nDTEND:20261204T093000Z\r\n"
    "SUMMARY:Dentist\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
TODO = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//phone//EN\r\nBEGIN:VTODO\r\nUID:taxes\r\n"
    "DTSTAMP:20261101T080000Z\r\nSUMMARY:File taxes\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
)
CARD = "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\nEND:VCARD\n"
SHARES = "/ocs/v2.php/apps/files_sharing/api/v1/shares"
Answer = Literal["decline", "cancel"] | None
# what each client hears, by how the person (or the client) answered
SAID: dict[Answer, tuple[str, str]] = {
    "decline": ("declined", "Not done: the user declined"),
    "cancel": ("cancelled", "Not done: the user cancelled"),
    None: ("refused_no_elicitation", "CONFIRM_DESTRUCTIVE=false"),
}


@dataclass
class World:
    """What the asking tools are called on, and a snapshot of it through Nextcloud's own APIs."""

    calls: dict[str, dict[str, Any]]
    snapshot: Callable[[], Any]


def _tasks_calendar(nextcloud: Nextcloud) -> None:
    body = (
        '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
        "<d:displayname>Tasks</d:displayname><c:supported-calendar-component-set>"
        '<c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>'
    )
    with nextcloud.http() as client:
        made = client.request("MKCALENDAR", nextcloud.calendar_path(nextcloud.admin, "tasks"), content=body)
    assert made.status_code == 201, made.text[:300]


def make_world(nextcloud: Nextcloud) -> World:
    admin = nextcloud.admin
    note = nextcloud.add_note(title="Bank", content=SECRET, category="Private")
    event_etag = nextcloud.put_calendar_object(admin, "dentist", EVENT)
    _tasks_calendar(nextcloud)
    nextcloud.put_calendar_object(admin, "taxes", TODO, calendar="tasks")
    nextcloud.put_card(admin, "kim.vcf", CARD)
    for path, data in (("Reports/q3.txt", SECRET), ("a.txt", "A"), ("b.txt", "B")):
        nextcloud.put_file(admin, path, data.encode())
    nextcloud.make_folder(admin, "Taxes")
    with nextcloud.http() as client:
        made = client.post(
            SHARES,
            params={"format": "json"},
            json={"path": "/Taxes", "shareType": 0, "shareWith": "alice", "permissions": 1},
        )
    assert made.status_code == 200, made.text[:300]
    share_id = str(made.json()["ocs"]["data"]["id"])
    onto_b = {"source": "a.txt", "destination": "b.txt", "overwrite": True}
    calls = {
        "nc_notes_update_note": {"note_id": note["id"], "etag": note["etag"], "content": ""},
        "nc_notes_delete_note": {"note_id": note["id"]},
        "nc_calendar_update_event": {
            "calendar": "personal",
            "uid": "dentist",
            "etag": event_etag,
            "status": "CANCELLED",
        },
        "nc_calendar_delete_event": {"calendar": "personal", "uid": "dentist"},
        "nc_calendar_delete_todo": {"calendar": "tasks", "uid": "taxes"},
        "nc_webdav_write_file": {"path": "a.txt", "content": "XX", "overwrite": True},
        "nc_webdav_delete_resource": {"path": "Reports/q3.txt"},
        "nc_webdav_move_resource": onto_b,
        "nc_webdav_copy_resource": onto_b,
        "nc_contacts_delete_contact": {"uid": "kim-1"},
        "nc_share_create": {"path": "Taxes", "kind": "link"},
        "nc_share_update": {"share_id": share_id, "rights": "edit"},
        "nc_share_delete": {"share_id": share_id},
    }

    def snapshot() -> Any:
        files = {path: nextcloud.read_file(admin, path) for path in ("Reports/q3.txt", "a.txt", "b.txt")}
        shares = sorted((s["id"], s["share_type"], s["permissions"]) for s in nextcloud.shares(admin))
        cards = nextcloud.card(admin, "kim.vcf")
        notes = [(n["id"], n["content"]) for n in nextcloud.notes()]
        return (
            notes,
            nextcloud.calendar_objects(admin),
            nextcloud.calendar_objects(admin, "tasks"),
            files,
            cards,
            shares,
        )

    return World(calls, snapshot)


@pytest.fixture(scope="module")
def ts() -> Iterator[TypeScriptClient]:
    with typescript_client() as client:
        yield client


def _python_problems(where: str, schema: Any, result: Any, decision: str | None, said: str) -> list[str]:
    problems = []
    if not result.is_error:
        problems.append(f"{where}: not an error")
    if said not in text_of(result):
        problems.append(f"{where}: {said!r} not in {text_of(result)!r}")
    if problem := strict_problem(schema, result):
        problems.append(f"{where}: {problem}")
    if decision and (result.meta or {}).get(ERROR_META_KEY, {}).get("decision") != decision:
        problems.append(f"{where}: _meta {result.meta!r}")
    return problems


def _ts_problems(where: str, reply: dict[str, Any], decision: str | None, said: str) -> list[str]:
    if "error" in reply:
        return [f"{where}: the TypeScript client threw {reply['error']}"]
    result = reply["result"]
    text = "\n".join(block.get("text", "") for block in result["content"])
    problems = []
    if result.get("isError") is not True:
        problems.append(f"{where}: not an error")
    if said not in text:
        problems.append(f"{where}: {said!r} not in {text!r}")
    if "structuredContent" in result:
        problems.append(f"{where}: structured content in an error: {result['structuredContent']}")
    if decision and result.get("_meta", {}).get(ERROR_META_KEY, {}).get("decision") != decision:
        problems.append(f"{where}: _meta {result.get('_meta')!r}")
    return problems


async def _schemas(session: ClientSession) -> dict[str, Any]:
    return {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}


# Every answer on the double; on the real ones the decline alone: what a real Nextcloud adds (the
# reads before asking, nothing changed after) is the same whatever the answer, and a client that
# cannot ask is refused before any request.
@cases("answer", list(SAID), on_real=["decline"])
async def test_every_tool_that_asks_is_refused_readably_in_both_clients(
    nextcloud: Nextcloud, ts: TypeScriptClient, answer: Answer
) -> None:
    """Decline, cancel, no elicitation: each asking tool answers an error result whose text says
    why, with no structured content to fail the output schema; the TypeScript client does not
    throw; each was asked exactly once where it could be; nothing changed."""
    decision, said = SAID[answer]
    world = make_world(nextcloud)
    before = world.snapshot()
    problems: list[str] = []
    with running_app(nextcloud.settings()) as base:
        url = f"{base}/mcp"
        human = Human(action=answer or "decline")
        kwargs: dict[str, Any] = {"elicitation_callback": human.answer} if answer else {}
        ts.open(f"ts-{answer}", url, human=answer)
        try:
            async with http_session(url, **kwargs) as session:
                schemas = await _schemas(session)
                for tool, arguments in world.calls.items():
                    where = f"{tool}/{answer or 'no elicitation'}"
                    asked = len(human.questions)
                    result = await session.call_tool(tool, arguments)
                    problems += _python_problems(f"python {where}", schemas[tool], result, decision, said)
                    if len(human.questions) - asked != (1 if answer else 0):
                        problems.append(f"python {where}: asked {human.questions[asked:]}")
                    reply = ts.call(f"ts-{answer}", tool, arguments)
                    problems += _ts_problems(f"typescript {where}", reply, decision, said)
                    if len(reply["asked"]) != (1 if answer else 0):
                        problems.append(f"typescript {where}: asked {reply['asked']}")
        finally:
            ts.close(f"ts-{answer}")
    assert not problems, "\n".join(problems)
    assert world.snapshot() == before


def test_the_asking_tools_above_are_all_that_can_ask() -> None:
    """Every destructive tool asks (ADR 0013), and the two updates that can remove (ADR 0019)."""
    # the default toolsets; app toolsets (deck, trash, ...) test their approvals in tests/apps/
    destructive = {spec.name for spec in all_tools() if spec.destructive and spec.toolset in DEFAULT_TOOLSETS}
    removing_updates = {"nc_notes_update_note", "nc_calendar_update_event"}
    world_tools = {
        "nc_notes_update_note",
        "nc_notes_delete_note",
        "nc_calendar_update_event",
        "nc_calendar_delete_event",
        "nc_calendar_delete_todo",
        "nc_webdav_write_file",
        "nc_webdav_delete_resource",
        "nc_webdav_move_resource",
        "nc_webdav_copy_resource",
        "nc_contacts_delete_contact",
        "nc_share_create",
        "nc_share_update",
        "nc_share_delete",
    }
    assert world_tools == destructive | removing_updates


async def test_other_refusals_are_readable_in_both_clients(
    nextcloud: Nextcloud, ts: TypeScriptClient
) -> None:
    """A stale update (the current version in the text and in _meta), a removal at level write,
    an item that does not exist, refused input and arguments that do not fit the schema."""
    note = nextcloud.add_note(title="Bank", content=SECRET)
    stale = {"note_id": note["id"], "etag": "not-the-etag", "content": "overwrite"}
    cases: list[tuple[str, dict[str, Any], str, str | None]] = [
        ("nc_notes_update_note", stale, "Current note: ", None),
        ("nc_notes_get_note", {"note_id": 987654}, "does not exist", None),
        ("nc_webdav_read_file", {"path": "../etc/passwd"}, "invalid input", None),
        ("nc_notes_get_note", {"note_id": "seven"}, "invalid arguments", None),
    ]
    emptied = {"note_id": note["id"], "etag": note["etag"], "content": ""}
    problems: list[str] = []
    for level, calls in (
        ("destructive", cases),
        ("write", [("nc_notes_update_note", emptied, "NEXTCLOUD_MCP_PERMISSIONS=write", "refused_level")]),
    ):
        with running_app(nextcloud.settings(nextcloud_mcp_permissions=level)) as base:
            ts.open("plain", f"{base}/mcp", human="accept")
            try:
                async with http_session(f"{base}/mcp", elicitation_callback=Human().answer) as session:
                    schemas = await _schemas(session)
                    for tool, arguments, said, decision in calls:
                        where = f"{tool} {arguments}"
                        result = await session.call_tool(tool, arguments)
                        problems += _python_problems(f"python {where}", schemas[tool], result, decision, said)
                        problems += _ts_problems(
                            f"typescript {where}", ts.call("plain", tool, arguments), decision, said
                        )
            finally:
                ts.close("plain")
    assert not problems, "\n".join(problems)
    assert [n["content"] for n in nextcloud.notes()] == [SECRET]
