"""The activity, notifications, user status and file reminders toolsets through the SDK's client
against the real Nextclouds with the kit's apps (`apps_nextcloud`, the instances the app
toolsets share), every step checked through the apps' own APIs. 34 ships all four apps enabled;
29 has user status and file reminders but neither Activity nor Notifications, whose tools are
then not offered at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import ClientSession

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration

OCS = "/ocs/v2.php/apps"
EVERYWHERE = {"nc_status_get", "nc_status_set", "nc_reminders_get", "nc_reminders_set"}
ON_34 = {"nc_activity_list", "nc_notifications_list", "nc_notifications_dismiss"}


def _ocs(nextcloud: Nextcloud, method: str, path: str, *, admin: bool = False, **body: Any) -> Any:
    with nextcloud.http(nextcloud.admin if admin else nextcloud.alice) as http:
        answer = http.request(method, f"{OCS}/{path}", params={"format": "json"}, json=body or None)
    answer.raise_for_status()
    return answer.json()["ocs"]["data"] if answer.content else None


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool(tool, arguments))


async def test_activity_notifications_status_and_reminders(apps_nextcloud: Nextcloud) -> None:
    """Lists this week's file activity, dismisses notifications (all only after the human
    approves), sets the user's status with a message, and sets then removes a file reminder."""
    nextcloud = apps_nextcloud
    nextcloud.put_file(nextcloud.alice, "Plans/week.md", b"# This week\n")
    human = Human()
    toolsets = "activity,notifications,status,reminders"
    with running_app(nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets=toolsets)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            listed = {t.name for t in (await session.list_tools()).tools}
            assert listed == (EVERYWHERE | ON_34 if nextcloud.major >= 34 else EVERYWHERE)
            if nextcloud.major >= 34:
                await _activity(session)
                await _notifications(nextcloud, session, human)
            await _status(nextcloud, session, human)
            await _reminders(nextcloud, session)


async def _activity(session: ClientSession) -> None:
    week = await _call(session, "nc_activity_list", kind="files")
    assert any("/Plans/week.md" in a["objects"] and a["by"] == "alice" for a in week["activities"])
    assert week["complete"] is True
    later = datetime.now(UTC) + timedelta(hours=1)
    future = await _call(
        session, "nc_activity_list", since=later.isoformat(), until=(later + timedelta(hours=1)).isoformat()
    )
    assert future["activities"] == []


async def _notifications(nextcloud: Nextcloud, session: ClientSession, human: Human) -> None:
    _ocs(nextcloud, "DELETE", "notifications/api/v2/notifications")  # the kit's "new app password"
    for subject in ("Backup finished", "Disk almost full", "New device signed in"):
        _ocs(
            nextcloud,
            "POST",
            "notifications/api/v2/admin_notifications/alice",
            admin=True,
            shortMessage=subject,
        )
    listed = await _call(session, "nc_notifications_list")
    assert [n["subject"] for n in listed["notifications"]] == [
        "New device signed in",
        "Disk almost full",
        "Backup finished",
    ]
    first = listed["notifications"][-1]["id"]
    await _call(session, "nc_notifications_dismiss", notification_id=first)
    left = _ocs(nextcloud, "GET", "notifications/api/v2/notifications")
    assert sorted(n["subject"] for n in left) == ["Disk almost full", "New device signed in"]
    human.action = "decline"
    declined = await session.call_tool("nc_notifications_dismiss", {"all": True})
    assert declined.is_error
    assert len(_ocs(nextcloud, "GET", "notifications/api/v2/notifications")) == 2
    assert "Dismiss all 2 of your notifications?" in human.questions[-1]
    assert "Disk almost full" in human.questions[-1]
    human.action = "accept"

    async def arrives() -> None:  # while the human reads the question
        _ocs(
            nextcloud,
            "POST",
            "notifications/api/v2/admin_notifications/alice",
            admin=True,
            shortMessage="Late",
        )

    human.while_asked = arrives
    dismissed = await _call(session, "nc_notifications_dismiss", all=True)
    human.while_asked = None
    assert len(dismissed["dismissed"]) == 2
    left = _ocs(nextcloud, "GET", "notifications/api/v2/notifications")
    assert [n["subject"] for n in left] == ["Late"]  # not shown, so not dismissed


async def _status(nextcloud: Nextcloud, session: ClientSession, human: Human) -> None:
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    asked = len(human.questions)
    status = await _call(
        session,
        "nc_status_set",
        status="dnd",
        message="In a workshop",
        icon="🛠",
        clear_at=tomorrow.isoformat(),
    )
    assert status["status"] == "dnd"
    assert "In a workshop" in human.questions[asked]
    seen = _ocs(nextcloud, "GET", "user_status/api/v1/user_status")
    assert (seen["status"], seen["message"], seen["icon"]) == ("dnd", "In a workshop", "🛠")
    assert seen["clearAt"] == int(tomorrow.timestamp())
    assert (await _call(session, "nc_status_get"))["message"] == "In a workshop"
    cleared = await _call(session, "nc_status_set", status="online", message="")
    assert cleared["message"] is None
    seen = _ocs(nextcloud, "GET", "user_status/api/v1/user_status")
    assert (seen["status"], seen["message"]) == ("online", None)
    assert len(human.questions) == asked + 1  # clearing publishes nothing: not asked


async def _reminders(nextcloud: Nextcloud, session: ClientSession) -> None:
    due = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    file_id = _file_id(nextcloud, "Plans/week.md")
    set_ = await _call(session, "nc_reminders_set", path="Plans/week.md", due=due.isoformat())
    assert set_ == {"path": "/Plans/week.md", "due": due.isoformat()}
    found = _ocs(nextcloud, "GET", f"files_reminders/api/v1/{file_id}")
    assert datetime.fromisoformat(found["dueDate"]) == due
    assert (await _call(session, "nc_reminders_get", path="Plans/week.md"))["due"] == due.isoformat()
    removed = await _call(session, "nc_reminders_set", path="Plans/week.md", due=None)
    assert removed["due"] is None
    assert _ocs(nextcloud, "GET", f"files_reminders/api/v1/{file_id}")["dueDate"] is None


def _file_id(nextcloud: Nextcloud, path: str) -> int:
    body = '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>'
    with nextcloud.http(nextcloud.alice) as http:
        answer = http.request(
            "PROPFIND", nextcloud.dav_path(nextcloud.alice, path), headers={"Depth": "0"}, content=body
        )
    text = answer.text
    return int(text.split("fileid>")[1].split("<")[0])
