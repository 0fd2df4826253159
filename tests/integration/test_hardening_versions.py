"""One rule for every update that can destroy (issue 31, item 2): the model's etag is checked
(a malformed one is refused as input), compared with the current version, a removal is decided
against the current content and asked for, and the write carries Nextcloud's own ETag, never
the model's string. Against the double and the real Nextcloud."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details
from tests.targets import cases
from tests.toolsets.calendar.test_calendar_tools import mkcalendar

pytestmark = pytest.mark.integration

EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VEVENT\r\nUID:dentist\r\n"
    "DTSTAMP:20261101T000000Z\r\nDTSTART:20261204T090000Z\r\nDTEND:20261204T093000Z\r\n"
    "SUMMARY:Dentist\r\nDESCRIPTION:Bring the x-rays\r\nRRULE:FREQ=YEARLY;COUNT=3\r\n"
    "ATTENDEE;CN=Kim:mailto:kim@example.org\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
TASK = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VTODO\r\nUID:taxes\r\n"
    "DTSTAMP:20261101T000000Z\r\nSUMMARY:File taxes\r\nDESCRIPTION:Receipts are in the blue box\r\n"
    "CATEGORIES:Home\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
)
CARD = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:kim-1\r\nFN:Kim Lee\r\nN:Lee;Kim;;;\r\n"
    "EMAIL;TYPE=WORK:kim@example.org\r\nNOTE:Met at the conference in Lyon\r\nEND:VCARD\r\n"
)


@dataclass
class Target:
    """An item the model updates with a removing change, and how to see whether it changed."""

    tool: str
    plant: Callable[[Nextcloud], str]  # returns the current ETag
    args: dict[str, Any]  # the removing change, without the etag
    state: Callable[[Nextcloud], Any]
    etag_key: str = "etag"


def _note(nextcloud: Nextcloud) -> str:
    note = nextcloud.add_note(title="Bank", content="IBAN DE00 1234 5678")
    return str(note["etag"])


def _task(nextcloud: Nextcloud) -> str:
    mkcalendar(nextcloud, "tasks", "Tasks", "VTODO")
    return nextcloud.put_calendar_object(nextcloud.admin, "taxes", TASK, calendar="tasks")


TARGETS = {
    "note": Target(
        "nc_notes_update_note",
        _note,
        {"content": ""},
        lambda nc: [(n["title"], n["content"]) for n in nc.notes()],
    ),
    "event": Target(
        "nc_calendar_update_event",
        lambda nc: nc.put_calendar_object(nc.admin, "dentist", EVENT),
        {
            "calendar": "personal",
            "uid": "dentist",
            "status": "CANCELLED",
            "description": "",
            "attendees": [],
            "recurrence": "",
        },
        lambda nc: nc.calendar_objects(nc.admin),
    ),
    "task": Target(
        "nc_calendar_update_todo",
        _task,
        {"calendar": "tasks", "uid": "taxes", "description": ""},
        lambda nc: nc.calendar_objects(nc.admin, "tasks"),
    ),
    "contact": Target(
        "nc_contacts_update_contact",
        lambda nc: nc.put_card(nc.admin, "kim-1.vcf", CARD),
        {"uid": "kim-1", "emails": [], "note": ""},
        lambda nc: nc.card(nc.admin, "kim-1.vcf"),
    ),
}


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _call(nextcloud: Nextcloud, human: Human, tool: str, args: dict[str, Any], **settings: Any) -> Any:
    with running_app(nextcloud.settings(**settings)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            return await session.call_tool(tool, args)


def _args(target: Target, nextcloud: Nextcloud, etag: str) -> dict[str, Any]:
    args = dict(target.args, etag=etag)
    if target.tool == "nc_notes_update_note":
        args["note_id"] = nextcloud.notes()[0]["id"]
    return args


MALFORMED = {
    "empty": lambda etag: "",
    "list after": lambda etag: f'x", "{etag}',
    "list before": lambda etag: f'{etag}", "x',
    "bare list": lambda etag: f"{etag},x",
    "line feed": lambda etag: f"{etag}\r\nX-Other: 1",
}


# refused as input before any request: every form on the double, on the real ones the form Notes
# and sabre would accept (the one that once got through)
@cases("form", MALFORMED, on_real=["list after"])
@pytest.mark.parametrize("kind", list(TARGETS))
async def test_a_malformed_etag_is_refused_as_input_and_changes_nothing_at_level_write(
    nextcloud: Nextcloud, kind: str, form: str
) -> None:
    """An empty etag (no If-Match at all) or a list holding the real one (which Notes and sabre
    accept) once skipped the removal check; now it is invalid input, nothing is asked or written."""
    target = TARGETS[kind]
    etag = target.plant(nextcloud)
    before = target.state(nextcloud)
    human = Human()
    args = _args(target, nextcloud, MALFORMED[form](etag))
    result = await _call(nextcloud, human, target.tool, args, nextcloud_mcp_permissions="write")
    assert result.is_error
    assert "invalid input" in _text(result)
    assert "etag" in _text(result)
    assert human.questions == []
    assert target.state(nextcloud) == before


@pytest.mark.parametrize("kind", ["task", "contact"])
async def test_emptying_a_task_or_a_contact_is_refused_at_level_write(
    nextcloud: Nextcloud, kind: str
) -> None:
    """Emptying a task's description or a contact's emails and note removes like emptying a note:
    refused at `write`, which promises never to remove."""
    target = TARGETS[kind]
    etag = target.plant(nextcloud)
    before = target.state(nextcloud)
    human = Human()
    result = await _call(
        nextcloud, human, target.tool, _args(target, nextcloud, etag), nextcloud_mcp_permissions="write"
    )
    assert result.is_error
    assert "NEXTCLOUD_MCP_PERMISSIONS=write" in _text(result)
    assert human.questions == []
    assert target.state(nextcloud) == before


@pytest.mark.parametrize("kind", ["task", "contact"])
async def test_emptying_a_task_or_a_contact_asks_only_about_the_current_version(
    nextcloud: Nextcloud, kind: str
) -> None:
    """Compared before anything is asked: an old etag is a conflict carrying the current item,
    and nobody is asked about a version the model has not seen. With the current etag (in any
    spelling: here the weak one) the human is asked once, and the change is written."""
    target = TARGETS[kind]
    etag = target.plant(nextcloud)
    before = target.state(nextcloud)
    human = Human()
    stale = await _call(nextcloud, human, target.tool, _args(target, nextcloud, "0123456789abcdef"))
    assert stale.is_error
    assert refusal_details(stale)["error"] == "conflict"
    assert human.questions == []
    assert target.state(nextcloud) == before
    changed = structured(await _call(nextcloud, human, target.tool, _args(target, nextcloud, f'W/"{etag}"')))
    assert len(human.questions) == 1
    assert changed["etag"] not in ("", etag)
    assert target.state(nextcloud) != before


async def test_a_file_is_replaced_only_with_a_well_formed_etag_even_without_approvals(
    nextcloud: Nextcloud,
) -> None:
    """With CONFIRM_DESTRUCTIVE=false the `if_match` of nc_webdav_write_file was sent as given:
    a list holding the real ETag replaced the file. Now it is refused as input."""
    etag = nextcloud.put_file(nextcloud.admin, "a.txt", b"shown")
    human = Human()
    args = {"path": "a.txt", "content": "replaced", "if_match": f'x", "{etag}'}
    result = await _call(nextcloud, human, "nc_webdav_write_file", args, confirm_destructive=False)
    assert result.is_error
    assert "invalid input" in _text(result)
    assert nextcloud.read_file(nextcloud.admin, "a.txt") == b"shown"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("nc_calendar_delete_event", {"calendar": "personal", "uid": "dentist"}),
        ("nc_contacts_delete_contact", {"uid": "kim-1"}),
    ],
)
async def test_a_delete_with_a_malformed_etag_says_the_etag_is_invalid(
    nextcloud: Nextcloud, tool: str, args: dict[str, Any]
) -> None:
    """A delete bound to an etag names a malformed one as such, rather than 'it changed'."""
    nextcloud.put_calendar_object(nextcloud.admin, "dentist", EVENT)
    etag = nextcloud.put_card(nextcloud.admin, "kim-1.vcf", CARD)
    human = Human()
    result = await _call(nextcloud, human, tool, {**args, "etag": f'x", "{etag}'})
    assert result.is_error
    assert "invalid input" in _text(result)
    assert human.questions == []
    assert nextcloud.card(nextcloud.admin, "kim-1.vcf") is not None
    assert nextcloud.calendar_objects(nextcloud.admin)
