"""Confined CalDAV targets (issue 13, item 2): a uid is a name inside its calendar, never a path.

The attack: with calendar scopes only, `uid=../../../files/<user>/Documents/evil` made the server
GET and then DELETE `/remote.php/dav/files/<user>/Documents/evil.ics`. A file is put at exactly
that place (holding a matching UID, so nothing but confinement stops it) and must survive."""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app

pytestmark = pytest.mark.integration

EVIL = "../../../files/admin/Documents/evil"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _ics(uid: str, kind: str = "VEVENT") -> bytes:
    when = "DTSTART:20261123T100000Z\r\nDTEND:20261123T110000Z\r\n" if kind == "VEVENT" else ""
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\n"
        f"BEGIN:{kind}\r\nUID:{uid}\r\nDTSTAMP:20261101T000000Z\r\n{when}SUMMARY:Bait\r\nEND:{kind}\r\n"
        "END:VCALENDAR\r\n"
    ).encode()


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("nc_calendar_get_event", "VEVENT"),
        ("nc_calendar_delete_event", "VEVENT"),
        ("nc_calendar_update_event", "VEVENT"),
        ("nc_calendar_delete_todo", "VTODO"),
        ("nc_calendar_update_todo", "VTODO"),
    ],
)
async def test_a_uid_with_dot_segments_reaches_nothing_outside_the_calendar(
    nextcloud: Nextcloud, tool: str, kind: str
) -> None:
    bait = _ics(EVIL, kind)
    nextcloud.put_file(nextcloud.admin, "Documents/evil.ics", bait)
    args: dict[str, Any] = {"calendar": "personal", "uid": EVIL}
    if "update" in tool:
        args |= {"etag": "x", "summary": "Changed"}
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            result = await session.call_tool(tool, args)
    assert result.is_error
    thing = "task" if kind == "VTODO" else "event"
    assert f"no {thing} with uid '{EVIL}' in calendar 'personal'" in _text(result)
    assert human.questions == []
    assert nextcloud.read_file(nextcloud.admin, "Documents/evil.ics") == bait


@pytest.mark.parametrize("uid", ["a/b?c#d", "..", "x\\y", "a%2Fb"])
async def test_an_odd_uid_is_no_such_event(nextcloud: Nextcloud, uid: str) -> None:
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool("nc_calendar_get_event", {"calendar": "personal", "uid": uid})
    assert result.is_error
    assert f"no event with uid '{uid}' in calendar 'personal'" in _text(result)


async def test_an_event_whose_uid_has_odd_characters_is_still_found(nextcloud: Nextcloud) -> None:
    """Other apps use uids like `x@host` or with `/`: found through the UID query, inside the
    calendar, and deleted there."""
    # distinct object names: real Nextcloud answers 403 to deleting an object whose name is also
    # in its calendar trash bin
    for number, uid in enumerate(("50% off?#1", "meeting/42@example.com")):
        nextcloud.put_calendar_object(nextcloud.admin, f"stored-elsewhere-{number}", _ics(uid).decode())
        with running_app(nextcloud.settings()) as base:
            async with http_session(f"{base}/mcp", elicitation_callback=Human().answer) as session:
                got = await session.call_tool("nc_calendar_get_event", {"calendar": "personal", "uid": uid})
                assert not got.is_error, _text(got)
                assert got.structured_content is not None
                assert got.structured_content["uid"] == uid
                deleted = await session.call_tool(
                    "nc_calendar_delete_event", {"calendar": "personal", "uid": uid}
                )
                assert not deleted.is_error, _text(deleted)
        assert nextcloud.calendar_objects(nextcloud.admin) == {}
