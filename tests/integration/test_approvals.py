"""Human approval of destructive actions, through the SDK client's form elicitation, against both
Nextclouds (the double, and the real 29.0.6 from the kit). Each target is created behind the
server's back through Nextcloud's own APIs, as another device would, and checked the same way
afterwards."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from nextcloud_mcp_server.tools import all_tools
from nextcloud_mcp_server.tools._apps import app_of
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import offline_server, provision
from tests.oidc import IdP
from tests.strict_clients import refusal_details
from tests.targets import ON_THE_DOUBLE, cases

pytestmark = pytest.mark.integration

NOTES = "/index.php/apps/notes/api/v1/notes"
EVENT_HREF = "/remote.php/dav/calendars/admin/personal/dentist.ics"
SECRET = "PIN 4711, do not share"


def _event(summary: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//phone//EN\r\nBEGIN:VEVENT\r\nUID:dentist\r\n"
        f"DTSTAMP:20261101T080000Z\r\nDTSTART:20261204T090000Z\r\nDTEND:20261204T093000Z\r\n"
        f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )


@dataclass
class Target:
    """Something a destructive tool can destroy, with another device's view of it."""

    kind: str
    tool: str
    arguments: dict[str, Any]
    shown: tuple[str, ...]  # what the approval prompt must state
    read: Any  # () -> current content, or None when gone
    change: Any  # () -> None: another device edits it
    original: str


def make_target(kind: str, nextcloud: Nextcloud) -> Target:
    admin = nextcloud.admin
    if kind == "note":
        note_id = nextcloud.add_note(title="Bank", content=SECRET, category="Private")["id"]

        def read_note() -> str | None:
            with nextcloud.http() as client:
                got = client.get(f"{NOTES}/{note_id}")
            return str(got.json()["content"]) if got.status_code == 200 else None

        def change_note() -> None:
            with nextcloud.http() as client:
                assert client.put(f"{NOTES}/{note_id}", json={"content": "edited on the phone"}).is_success

        return Target(
            kind,
            "nc_notes_delete_note",
            {"note_id": note_id},
            ('the note "Bank"', 'in category "Private"', "last changed 20", " UTC?"),
            read_note,
            change_note,
            SECRET,
        )
    if kind == "event":
        nextcloud.put_calendar_object(admin, "dentist", _event("Dentist"))
        href = nextcloud.calendar_path(admin) + "dentist.ics"

        def read_event() -> str | None:
            """The SUMMARY as stored (the server may re-serialise the rest)."""
            with nextcloud.http() as client:
                got = client.get(href)
            if got.status_code == 404:
                return None
            [summary] = [line for line in got.text.splitlines() if line.startswith("SUMMARY:")]
            return summary.removeprefix("SUMMARY:")

        def change_event() -> None:
            nextcloud.put_calendar_object(admin, "dentist", _event("Dentist (moved)"))

        return Target(
            kind,
            "nc_calendar_delete_event",
            {"calendar": "personal", "uid": "dentist"},
            ('the event "Dentist" on Fri 04 Dec 2026, 09:00-09:30 (UTC', "from calendar 'personal'"),
            read_event,
            change_event,
            "Dentist",
        )
    nextcloud.put_file(admin, "Reports/q3.txt", SECRET.encode())

    def read_file() -> str | None:
        data = nextcloud.read_file(admin, "Reports/q3.txt")
        return None if data is None else data.decode()

    def change_file() -> None:
        nextcloud.put_new_version(
            admin, "Reports/q3.txt", (SECRET + " - and a longer version saved by the desktop client").encode()
        )

    return Target(
        kind,
        "nc_webdav_delete_resource",
        {"path": "Reports/q3.txt"},
        (f"the file /Reports/q3.txt ({len(SECRET)} bytes, last changed 20", " UTC)"),
        read_file,
        change_file,
        SECRET,
    )


KINDS = ["note", "event", "file"]


@pytest.fixture(params=KINDS)
def target(request: pytest.FixtureRequest, nextcloud: Nextcloud) -> Target:
    return make_target(str(request.param), nextcloud)


@pytest.fixture
def mcp_url(nextcloud: Nextcloud) -> Iterator[str]:
    """This server in front of the Nextcloud under test (both backends), as admin."""
    with running_app(nextcloud.settings()) as base:
        yield f"{base}/mcp"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _approval_logs(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "nextcloud_mcp_server.approvals"]


async def test_approving_runs_the_action_after_stating_what_is_destroyed(
    target: Target, mcp_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "nextcloud_mcp_server.approvals")
    human = Human(reason="old stuff")
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        done = structured(await session.call_tool(target.tool, target.arguments))
    assert target.read() is None
    assert done
    [question] = human.questions
    assert question.startswith("Delete ")
    for detail in target.shown:
        assert detail in question, (detail, question)
    [schema] = human.schemas
    assert schema["required"] == ["approve"]
    assert schema["properties"]["approve"]["type"] == "boolean"
    assert schema["properties"]["reason"]["type"] == "string"
    [logged] = _approval_logs(caplog)
    assert logged.startswith(f"destructive action approved by admin: {target.tool}: ")
    assert logged.endswith("(reason: old stuff)")
    assert SECRET not in caplog.text


ANSWERS = {
    "decline": (Human(action="decline"), "declined"),
    "cancel": (Human(action="cancel"), "cancelled"),
    "accept-unchecked": (Human(action="accept", approve=False), "declined"),
}


# the answer is read before any request that changes: every answer on the double, one on the
# real ones (which show that nothing changed there)
@cases("refusal", ANSWERS, on_real=["decline"])
async def test_declining_or_cancelling_changes_nothing(
    target: Target, refusal: str, mcp_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    answer, decision = ANSWERS[refusal]
    caplog.set_level(logging.INFO, "nextcloud_mcp_server.approvals")
    human = Human(action=answer.action, approve=answer.approve)
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        result = await session.call_tool(target.tool, target.arguments)
    assert refusal_details(result) == {"declined": True, "decision": decision}
    assert f"Not done: the user {decision}" in _text(result)
    assert "Nothing was changed" in _text(result)
    assert target.read() == target.original
    assert len(human.questions) == 1
    [logged] = _approval_logs(caplog)
    assert logged.startswith(f"destructive action {decision} by admin: {target.tool}: ")


async def test_a_target_changed_while_asking_is_refused_and_kept(target: Target, mcp_url: str) -> None:
    """The approval covers the version shown; another device's edit meanwhile voids it."""

    async def edit_elsewhere() -> None:
        target.change()

    human = Human(while_asked=edit_elsewhere)
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        result = await session.call_tool(target.tool, target.arguments)
    assert refusal_details(result) == {"error": "conflict", "decision": "refused_changed"}
    assert "changed while you were being asked" in _text(result)
    current = target.read()
    assert current is not None
    assert current != target.original


@ON_THE_DOUBLE  # refused before any request
async def test_a_client_that_cannot_ask_is_refused_naming_the_setting(
    target: Target, mcp_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "nextcloud_mcp_server.approvals")
    async with http_session(mcp_url) as session:  # no elicitation callback: no capability
        result = await session.call_tool(target.tool, target.arguments)
    assert "CONFIRM_DESTRUCTIVE=false" in _text(result)
    assert refusal_details(result) == {"declined": True, "decision": "refused_no_elicitation"}
    assert target.read() == target.original
    [logged] = _approval_logs(caplog)
    assert logged.startswith(f"destructive action refused_no_elicitation by admin: {target.tool}: ")


async def test_with_approvals_off_the_action_runs_without_asking(
    target: Target, nextcloud: Nextcloud
) -> None:
    quiet = nextcloud.settings(confirm_destructive=False)
    with running_app(quiet) as base:
        async with http_session(f"{base}/mcp") as session:
            structured(await session.call_tool(target.tool, target.arguments))
    assert target.read() is None


async def test_a_2026_client_answers_the_form_in_an_input_required_round(
    nextcloud: Nextcloud, mcp_url: str
) -> None:
    """On protocol 2026-07-28 the form rides in an input-required result; the SDK's Client asks
    the person and retries with the answer on its own."""
    kept, gone = make_target("note", nextcloud), make_target("file", nextcloud)
    no, yes = Human(action="decline"), Human()
    async with Client(mcp_url, elicitation_callback=no.answer) as client:
        assert client.session.protocol_version >= "2026-07-28"
        refused = await client.call_tool(kept.tool, kept.arguments)
    async with Client(mcp_url, elicitation_callback=yes.answer) as client:
        done = await client.call_tool(gone.tool, gone.arguments)
    assert refused.is_error
    assert kept.read() == kept.original
    assert not done.is_error, done.content
    assert gone.read() is None
    assert no.questions[0].startswith('Delete the note "Bank"')
    assert yes.questions[0].startswith("Delete the file /Reports/q3.txt")


async def test_replacing_asks_only_when_there_is_something_to_replace(
    nextcloud: Nextcloud, mcp_url: str
) -> None:
    admin = nextcloud.admin
    nextcloud.put_file(admin, "a.txt", b"A")
    nextcloud.put_file(admin, "b.txt", b"B")
    human = Human(action="decline")
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        fresh = structured(
            await session.call_tool(
                "nc_webdav_write_file", {"path": "new.txt", "content": "n", "overwrite": True}
            )
        )
        assert fresh["created"] is True
        assert human.questions == []

        kept = await session.call_tool(
            "nc_webdav_write_file", {"path": "a.txt", "content": "XX", "overwrite": True}
        )
        copy = {"source": "a.txt", "destination": "b.txt", "overwrite": True}
        not_copied = await session.call_tool("nc_webdav_copy_resource", copy)
        not_moved = await session.call_tool("nc_webdav_move_resource", copy)
        assert [r.is_error for r in (kept, not_copied, not_moved)] == [True, True, True]
        assert nextcloud.read_file(admin, "a.txt") == b"A"
        assert nextcloud.read_file(admin, "b.txt") == b"B"
        assert human.questions[0].startswith("Replace the file /a.txt (1 bytes, last changed ")
        assert human.questions[0].endswith(" with new content (2 bytes)?")
        assert human.questions[1].startswith("Copy /a.txt onto the file /b.txt (1 bytes")
        assert human.questions[2].startswith("Move /a.txt onto the file /b.txt (1 bytes")

        human.action = "accept"
        moved = structured(await session.call_tool("nc_webdav_move_resource", copy))
    assert moved["replaced"] is True
    assert nextcloud.read_file(admin, "b.txt") == b"A"
    assert not nextcloud.exists(admin, "a.txt")
    assert len(human.questions) == 4


async def test_a_folder_prompt_counts_what_is_inside(nextcloud: Nextcloud, mcp_url: str) -> None:
    admin = nextcloud.admin
    nextcloud.make_folder(admin, "Old/sub")
    for name in ("a.txt", "b.txt"):
        nextcloud.put_file(admin, f"Old/{name}", b"x")
    human = Human(action="decline")
    async with http_session(mcp_url, elicitation_callback=human.answer) as session:
        result = await session.call_tool("nc_webdav_delete_resource", {"path": "Old"})
    assert result.is_error
    assert human.questions[0].startswith("Delete the folder /Old with 3 item(s) directly inside")
    assert [nextcloud.exists(admin, f"Old/{name}") for name in ("a.txt", "b.txt", "sub")] == [True] * 3


async def test_decisions_go_to_the_audit_trail_when_the_store_is_in_use(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        await provision(server, "alice")
        diary = double.user_files("alice") / "diary.txt"
        diary.write_text(SECRET)
        human = Human(action="decline")
        async with http_session(
            server.mcp, headers=server.headers("alice"), elicitation_callback=human.answer
        ) as session:
            refused = await session.call_tool("nc_webdav_delete_resource", {"path": "diary.txt"})
            human.action, human.reason = "accept", "written by mistake"
            structured(await session.call_tool("nc_webdav_delete_resource", {"path": "diary.txt"}))
        rows = server.store_rows(
            "SELECT subject, event, detail FROM audit WHERE event LIKE 'approval_%' ORDER BY id"
        )
        raw = b"".join(p.read_bytes() for p in tmp_path.glob("store.sqlite3*"))
    assert refused.is_error
    assert rows == [
        ("alice", "approval_declined", "nc_webdav_delete_resource: /diary.txt"),
        ("alice", "approval_approved", "nc_webdav_delete_resource: /diary.txt (reason: written by mistake)"),
    ]
    assert SECRET.encode() not in raw
    assert not diary.exists()


def _documented_levels() -> dict[str, str]:
    readme = (Path(__file__).parents[2] / "docs" / "tools.md").read_text()
    rows = [line.split("|") for line in readme.splitlines() if line.startswith("| `nc_")]
    return {cells[1].strip().strip("`"): cells[4].strip() for cells in rows}


# apps installed only on the `apps_nextcloud` instances (the double does not say, so offers all)
ONLY_WITH_APPS = {
    *("deck", "spreed", "tables", "collectives", "mail"),
    *("cookbook", "bookmarks", "polls", "forms", "news"),
}
NOT_ON_29 = {"activity", "notifications"}  # Nextcloud 34 ships them; 29's kit has neither


async def test_each_permission_level_lists_what_the_readme_says(nextcloud: Nextcloud) -> None:
    """tools/list at each level = the rows of docs/tools.md at or below it; no tool at a level carries a
    hint above it, and a hidden tool cannot be called (the three levels in one run per target:
    three servers in front of the same Nextcloud)."""
    order = ["read", "write", "destructive"]
    documented = _documented_levels()
    for level in order:
        expected = {name for name, at in documented.items() if order.index(at) <= order.index(level)}
        if nextcloud.kind == "real":  # the plain real instances have none of these apps: not offered
            needs = {spec.name: getattr(app_of(spec.toolset), "id", None) for spec in all_tools()}
            missing = ONLY_WITH_APPS | (NOT_ON_29 if nextcloud.major < 34 else set())
            expected -= {name for name, app in needs.items() if app in missing}
        # every toolset: the table in docs/tools.md lists them all
        limited = nextcloud.settings(nextcloud_mcp_permissions=level, nextcloud_mcp_toolsets="all")
        with running_app(limited) as base:
            async with http_session(f"{base}/mcp") as session:
                tools = (await session.list_tools()).tools
                hidden = await session.call_tool("nc_notes_delete_note", {"note_id": 1})
        assert {t.name for t in tools} == expected, level
        annotations = [t.annotations for t in tools]
        assert all(a is not None for a in annotations)
        if level == "read":
            assert all(a.read_only_hint for a in annotations if a)
        if level == "write":
            assert not any(a.destructive_hint for a in annotations if a)
            assert {"nc_notes_create_note", "nc_webdav_create_file", "nc_calendar_create_event"} <= expected
        if level == "destructive":
            assert "note 1 does not exist" in _text(hidden)  # offered: it ran and looked for the note
        else:
            assert hidden.is_error
            assert "Unknown tool" in _text(hidden), _text(hidden)
