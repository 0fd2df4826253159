"""Approval gaps (issue 13, item 3): updates that remove content or cancel ask like deletes (and
are refused at level write); replacing a file by MOVE/COPY is bound to the version shown. ADR 0019."""

from __future__ import annotations

import os
from typing import Any

import pytest
from mcp.types import ElicitResult

from nextcloud_mcp_server.toolsets.files import tools as files_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration

EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VEVENT\r\nUID:dentist\r\n"
    "DTSTAMP:20261101T000000Z\r\nDTSTART:20261204T090000Z\r\nDTEND:20261204T093000Z\r\n"
    "SUMMARY:Dentist\r\nDESCRIPTION:Bring the x-rays\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _call(nextcloud: Nextcloud, human: Human, tool: str, args: dict[str, Any], **settings: Any) -> Any:
    with running_app(nextcloud.settings(**settings)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            return await session.call_tool(tool, args)


async def test_emptying_a_note_asks_and_a_decline_keeps_it(nextcloud: Nextcloud) -> None:
    note = nextcloud.add_note(title="Bank", content="IBAN DE00 1234")
    human = Human(approve=False)
    args = {"note_id": note["id"], "etag": note["etag"], "content": ""}
    result = await _call(nextcloud, human, "nc_notes_update_note", args)
    assert result.is_error
    assert human.questions == ['Replace the content of the note "Bank" (14 characters) with nothing?']
    assert nextcloud.notes()[0]["content"] == "IBAN DE00 1234"


async def test_emptying_a_note_at_level_write_is_refused_without_asking(nextcloud: Nextcloud) -> None:
    note = nextcloud.add_note(title="Bank", content="IBAN DE00 1234")
    human = Human()
    args = {"note_id": note["id"], "etag": note["etag"], "content": " "}
    result = await _call(nextcloud, human, "nc_notes_update_note", args, nextcloud_mcp_permissions="write")
    assert result.is_error
    assert "NEXTCLOUD_MCP_PERMISSIONS=write" in _text(result)
    assert human.questions == []
    assert nextcloud.notes()[0]["content"] == "IBAN DE00 1234"


async def test_an_ordinary_edit_does_not_ask(nextcloud: Nextcloud) -> None:
    note = nextcloud.add_note(title="Bank", content="IBAN DE00 1234")
    human = Human()
    args = {"note_id": note["id"], "etag": note["etag"], "content": "IBAN DE00 1235"}
    result = await _call(nextcloud, human, "nc_notes_update_note", args, nextcloud_mcp_permissions="write")
    assert structured(result)["content"] == "IBAN DE00 1235"
    assert human.questions == []


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"status": "CANCELLED"}, "cancel it"),
        ({"description": ""}, "remove its description"),
        ({"summary": ""}, "remove its summary"),
    ],
)
async def test_cancelling_or_blanking_an_event_asks(
    nextcloud: Nextcloud, change: dict[str, str], said: str
) -> None:
    etag = nextcloud.put_calendar_object(nextcloud.admin, "dentist", EVENT)
    before = nextcloud.calendar_objects(nextcloud.admin)
    human = Human(approve=False)
    args = {"calendar": "personal", "uid": "dentist", "etag": etag, **change}
    result = await _call(nextcloud, human, "nc_calendar_update_event", args)
    assert result.is_error
    assert human.questions == [
        f"Change the event \"Dentist\" on Fri 04 Dec 2026, 09:00-09:30 (UTC) in calendar 'personal': {said}?"
    ]
    assert nextcloud.calendar_objects(nextcloud.admin) == before
    refused = await _call(
        nextcloud, Human(), "nc_calendar_update_event", args, nextcloud_mcp_permissions="write"
    )
    assert "NEXTCLOUD_MCP_PERMISSIONS=write" in _text(refused)
    assert nextcloud.calendar_objects(nextcloud.admin) == before


async def test_a_file_replaced_by_copy_is_the_version_shown(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The target changes while the human is asked; even with the re-read after the answer left
    out, the COPY itself carries the shown version (`If` on the destination) and is refused."""

    async def never_notices(*args: Any) -> None:
        return None

    monkeypatch.setattr(files_tools, "still_unchanged", never_notices)
    nextcloud.put_file(nextcloud.admin, "a.txt", b"new")
    nextcloud.put_file(nextcloud.admin, "b.txt", b"shown")

    async def someone_edits() -> None:
        nextcloud.put_new_version(nextcloud.admin, "b.txt", b"edited meanwhile")

    human = Human(while_asked=someone_edits)
    args = {"source": "a.txt", "destination": "b.txt", "overwrite": True}
    result = await _call(nextcloud, human, "nc_webdav_copy_resource", args)
    assert result.is_error
    assert "changed while you were being asked" in _text(result)
    assert len(human.questions) == 1
    assert nextcloud.read_file(nextcloud.admin, "b.txt") == b"edited meanwhile"


@pytest.mark.parametrize("nextcloud", ["double"], indirect=True)
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("nc_webdav_delete_resource", {"path": "b.txt"}),
        ("nc_webdav_copy_resource", {"source": "a.txt", "destination": "b.txt", "overwrite": True}),
        ("nc_webdav_move_resource", {"source": "a.txt", "destination": "b.txt", "overwrite": True}),
    ],
    ids=["delete", "copy", "move"],
)
async def test_a_file_replaced_within_its_second_is_noticed_though_its_etag_is_kept(
    nextcloud: Nextcloud, tool: str, args: dict[str, Any]
) -> None:
    """Nextcloud 29 keeps a file's ETag when the file is replaced within the same second
    (recorded in webdav_same_second_*.txt; the double does the same). No timing can promise that
    second on a real server, so the other device's edit is made on the double's disk, keeping the
    modification time; the approval must still not cover it."""
    assert nextcloud.double is not None
    admin = nextcloud.admin
    nextcloud.put_file(admin, "a.txt", b"new")
    nextcloud.put_file(admin, "b.txt", b"shown")
    shown_etag = nextcloud.etag(admin, "b.txt")
    on_disk = nextcloud.double.user_files("admin") / "b.txt"

    async def replace_within_the_second() -> None:
        before = on_disk.stat()
        with on_disk.open("r+b") as file:  # in place: same inode, as Nextcloud keeps the file id
            file.write(b"edited meanwhile")
        os.utime(on_disk, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert nextcloud.etag(admin, "b.txt") == shown_etag

    human = Human(while_asked=replace_within_the_second)
    result = await _call(nextcloud, human, tool, args)
    assert result.is_error, result.content
    assert "changed while you were being asked" in _text(result)
    assert len(human.questions) == 1
    assert nextcloud.read_file(admin, "b.txt") == b"edited meanwhile"
    assert nextcloud.read_file(admin, "a.txt") == b"new"


@pytest.mark.parametrize("tool", ["nc_webdav_copy_resource", "nc_webdav_move_resource"])
async def test_a_file_or_folder_is_replaced_after_approval(nextcloud: Nextcloud, tool: str) -> None:
    nextcloud.put_file(nextcloud.admin, "a.txt", b"new")
    nextcloud.put_file(nextcloud.admin, "b.txt", b"old")
    nextcloud.put_file(nextcloud.admin, "F/one.txt", b"1")
    nextcloud.put_file(nextcloud.admin, "G/two.txt", b"2")
    human = Human()
    for source, destination in (("a.txt", "b.txt"), ("F", "G")):
        args = {"source": source, "destination": destination, "overwrite": True}
        result = await _call(nextcloud, human, tool, args)
        assert structured(result)["replaced"] is True
    assert len(human.questions) == 2
    assert nextcloud.read_file(nextcloud.admin, "b.txt") == b"new"
    assert nextcloud.read_file(nextcloud.admin, "G/one.txt") == b"1"
    assert not nextcloud.exists(nextcloud.admin, "G/two.txt")


@pytest.mark.parametrize(
    "content",
    [{}, {"approve": "maybe"}, {"approve": True, "reason": 5}],
    ids=["empty", "not-a-bool", "reason-number"],
)
async def test_an_accepted_answer_that_does_not_fit_the_form_is_a_no(
    nextcloud: Nextcloud, content: dict[str, Any]
) -> None:
    """A form left with its box unticked sends {}: the SDK's check of the answer raised out of the
    tool, an internal error with no reason, before."""
    note = nextcloud.add_note(title="Bank", content="IBAN DE00 1234")

    async def answer(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content=content)

    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=answer) as session:
            result = await session.call_tool("nc_notes_delete_note", {"note_id": note["id"]})
    assert result.is_error
    assert "did not match the approval form" in _text(result), _text(result)
    assert [n["content"] for n in nextcloud.notes() if n["id"] == note["id"]] == ["IBAN DE00 1234"]
