"""The second human-approval race suite (issue 38): while the person is asked, something about
what they were shown changes: it is edited (the same size and time, where a client can keep
them), renamed, made public, or someone is added. Every such change voids the approval: nothing
is posted, deleted, shared or replaced. On the real Nextcloud 29 and 34 (the apps' toolsets with
the apps), the double only where the real server cannot show the race.

Every tool that asks the human (`require_approval`, `approve_removal`, `approve_update`,
`approve_file_action`, `approve_publication`), and where its races are tested:
- nc_talk_post_message: renamed, made public, listed to every user, a participant added (here);
  someone joins (tests/toolsets/talk/test_talk.py); made public (test_publishing.py)
- nc_deck_add_comment: card renamed, board shared with a group (here, test_publishing.py)
- nc_deck_delete_card: a label added in the same second (tests/toolsets/deck/test_deck_deletions.py)
- nc_deck_delete_board: renamed, a card added, shared with a user (test_races_deck.py)
- nc_deck_move_card (to another board): the card's description changed (tests/toolsets/deck/
  test_deck_boards.py); the boards' sharing is bound too (tests/toolsets/deck/test_deck_structure.py)
- nc_comments_add: the file made public, shared with another user (here)
- nc_tags_assign (create=true): what is shown is the tag's name and "every user", which nothing
  can change while asked; no race applies
- nc_webdav_delete_resource, nc_webdav_write_file, nc_webdav_move_resource: edited keeping size
  and time, renamed and another put in its place (here); edited (integration/test_approvals.py)
- nc_webdav_copy_resource: edited (integration/test_hardening_approvals.py, also within one
  second on the double, which alone can keep the ETag on purpose)
- nc_share_create: another file put in its place, edited keeping size and time; nc_share_update,
  nc_share_delete: its rights changed, the folder renamed (test_races_sharing.py)
- nc_versions_restore: edited (tests/apps/test_file_apps.py), edited keeping size and time
  (test_bound_to_content.py), renamed, another file put in its place (test_races_sharing.py)
- nc_trash_empty: another item trashed while asked (tests/apps/test_file_apps.py)
- nc_collectives_edit_page: edited, edited keeping size and time (test_races_sharing.py; 34)
- nc_collectives_trash_page: a subpage added (tests/toolsets/collectives/test_collectives.py; 34)
- nc_tables_delete_row: changed in the same second (test_bound_to_content.py);
  nc_tables_update_row: changed (tests/toolsets/tables/test_tables_refusals.py)
- nc_notes_delete_note, nc_calendar_delete_event: edited (integration/test_approvals.py);
  nc_notes_update_note, nc_calendar_update_event, nc_calendar_delete_todo,
  nc_calendar_update_todo, nc_contacts_delete_contact, nc_contacts_update_contact: edited
  (test_races_pim.py, on the double too)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app
from tests.security.test_bound_to_content import _rewrite_keeping_size_and_time
from tests.security.test_publishing import DECK, ROOM, SHARES, add_carol, ocs, posted

Race = Callable[[], Awaitable[None]]


async def _expect_refused(
    nc: Nextcloud, toolsets: str, tool: str, arguments: dict[str, Any], race: Race
) -> str:
    human = Human(while_asked=race)
    config = nc.settings(nc.alice, nextcloud_mcp_toolsets=toolsets)
    with running_app(config) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    assert len(human.questions) == 1  # it was asked, and the change came while it was
    return " ".join(getattr(block, "text", "") for block in result.content)


def _team(nc: Nextcloud) -> str:
    """Alice's group conversation "Team" with admin and carol (so a post asks)."""
    add_carol(nc)
    token = str(ocs(nc, nc.alice, "POST", ROOM, json={"roomType": 2, "roomName": "Team"})["token"])
    for user in ("admin", "carol"):
        body = {"newParticipant": user, "source": "users"}
        ocs(nc, nc.alice, "POST", f"{ROOM}/{token}/participants", json=body)
    return token


TALK_RACES = {
    "renamed": lambda nc, token: ocs(nc, nc.alice, "PUT", f"{ROOM}/{token}", json={"roomName": "All hands"}),
    "made public": lambda nc, token: ocs(nc, nc.alice, "POST", f"{ROOM}/{token}/public"),
    "listed to every user": lambda nc, token: ocs(
        nc, nc.alice, "PUT", f"{ROOM}/{token}/listable", json={"scope": 1}
    ),
    "a participant added": lambda nc, token: ocs(
        nc,
        nc.alice,
        "POST",
        f"{ROOM}/{token}/participants",
        json={"newParticipant": "bob", "source": "users"},
    ),
}


@pytest.mark.parametrize("change", list(TALK_RACES))
async def test_a_talk_post_is_not_sent_after_a_change_while_asked(
    apps_nextcloud: Nextcloud, change: str
) -> None:
    nc = apps_nextcloud
    token = _team(nc)
    if change == "a participant added":
        assert nc.instance is not None
        nc.instance.add_user("bob", "bob-login-password-4711")

    async def race() -> None:
        TALK_RACES[change](nc, token)

    text = await _expect_refused(nc, "talk", "nc_talk_post_message", {"token": token, "text": "hello"}, race)
    assert "changed while you were being asked" in text
    assert posted(nc, nc.admin, token) == []


def _card_on_shared_board(nc: Nextcloud) -> tuple[int, int]:
    add_carol(nc)

    def deck(method: str, path: str, body: Any) -> Any:
        return ocs(nc, nc.alice, method, f"{DECK}{path}", json=body)

    board = deck("POST", "/boards", {"title": "Plans", "color": "0082c9"})["id"]
    stack = deck("POST", f"/boards/{board}/stacks", {"title": "To do", "order": 1})["id"]
    card = deck("POST", f"/boards/{board}/stacks/{stack}/cards", {"title": "Budget"})["id"]
    for user in ("admin", "carol"):
        deck(
            "POST",
            f"/boards/{board}/acl",
            {
                "type": 0,
                "participant": user,
                "permissionEdit": True,
                "permissionShare": False,
                "permissionManage": False,
            },
        )
    return board, card


@pytest.mark.parametrize("change", ["card renamed", "board shared with a group"])
async def test_a_deck_comment_is_not_sent_after_a_change_while_asked(
    apps_nextcloud: Nextcloud, change: str
) -> None:
    nc = apps_nextcloud
    board, card = _card_on_shared_board(nc)
    stack = ocs(nc, nc.alice, "GET", f"{DECK}/boards/{board}/stacks")[0]["id"]

    async def race() -> None:
        if change == "card renamed":
            body = {
                "title": "Budget (public)",
                "type": "plain",
                "owner": "alice",
                "order": 0,
                "description": "",
            }
            body.update({"duedate": None})
            ocs(nc, nc.alice, "PUT", f"{DECK}/boards/{board}/stacks/{stack}/cards/{card}", json=body)
        else:
            nc.add_group("staff", "admin")
            body = {
                "type": 1,
                "participant": "staff",
                "permissionEdit": False,
                "permissionShare": False,
                "permissionManage": False,
            }
            ocs(nc, nc.alice, "POST", f"{DECK}/boards/{board}/acl", json=body)

    arguments = {"card_id": card, "message": "numbers attached"}
    text = await _expect_refused(nc, "deck", "nc_deck_add_comment", arguments, race)
    assert "changed while you were being asked" in text
    assert ocs(nc, nc.alice, "GET", f"/ocs/v2.php/apps/deck/api/v1.0/cards/{card}/comments") == []


@pytest.mark.parametrize("change", ["made public", "shared with a user"])
async def test_a_file_comment_is_not_sent_after_a_change_while_asked(
    each_real_nextcloud: Nextcloud, change: str
) -> None:
    nc = each_real_nextcloud
    add_carol(nc)  # a reset: before anything the test makes
    nc.put_file(nc.alice, "Team/plan.txt", b"plan")
    assert nc.instance is not None
    nc.instance.add_user("bob", "bob-login-password-4711")
    for user in ("admin", "carol"):  # two people read it: a comment asks
        ocs(nc, nc.alice, "POST", SHARES, data={"path": "/Team", "shareType": 0, "shareWith": user})

    async def race() -> None:
        if change == "made public":
            ocs(nc, nc.alice, "POST", SHARES, data={"path": "/Team/plan.txt", "shareType": 3})
        else:
            ocs(nc, nc.alice, "POST", SHARES, data={"path": "/Team", "shareType": 0, "shareWith": "bob"})

    arguments = {"path": "Team/plan.txt", "message": "final numbers"}
    text = await _expect_refused(nc, "comments", "nc_comments_add", arguments, race)
    assert "changed while you were being asked" in text
    with nc.http(nc.alice) as client:
        listed = client.request(
            "REPORT",
            "/remote.php/dav/comments/files/" + str(_file_id(nc, "Team/plan.txt")),
            content=b'<?xml version="1.0"?><oc:filter-comments xmlns:oc="http://owncloud.org/ns">'
            b"<oc:limit>10</oc:limit><oc:offset>0</oc:offset></oc:filter-comments>",
        )
    assert "final numbers" not in listed.text


def _file_id(nc: Nextcloud, path: str) -> int:
    with nc.http(nc.alice) as client:
        got = client.request(
            "PROPFIND",
            nc.dav_path(nc.alice, path),
            headers={"Depth": "0"},
            content=b'<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
            b"<d:prop><oc:fileid/></d:prop></d:propfind>",
        )
    return int(got.text.split("<oc:fileid>")[1].split("<")[0])


FILE_TOOLS = {
    "nc_webdav_delete_resource": lambda: {"path": "q3.txt"},
    "nc_webdav_write_file": lambda: {"path": "q3.txt", "content": "replaced", "overwrite": True},
    "nc_webdav_move_resource": lambda: {"source": "draft.txt", "destination": "q3.txt", "overwrite": True},
}


@pytest.mark.parametrize("change", ["edited keeping size and time", "renamed"])
@pytest.mark.parametrize("tool", list(FILE_TOOLS))
async def test_a_file_is_not_destroyed_after_a_change_while_asked(
    each_real_nextcloud: Nextcloud, tool: str, change: str
) -> None:
    nc = each_real_nextcloud
    nc.put_file(nc.alice, "q3.txt", b"pin=4711")
    nc.put_file(nc.alice, "draft.txt", b"draft")

    async def race() -> None:
        if change == "renamed":
            with nc.http(nc.alice) as client:
                moved = client.request(
                    "MOVE",
                    nc.dav_path(nc.alice, "q3.txt"),
                    headers={"Destination": nc.url + nc.dav_path(nc.alice, "q3-final.txt")},
                )
            assert moved.status_code in (201, 204)
            nc.put_file(nc.alice, "q3.txt", b"pin=9999")  # another file now has the old name
        else:
            _rewrite_keeping_size_and_time(nc, nc.alice, "q3.txt", b"pin=****")

    text = await _expect_refused(nc, "files", tool, FILE_TOOLS[tool](), race)
    assert "changed while you were being asked" in text
    expected = b"pin=9999" if change == "renamed" else b"pin=****"
    assert nc.read_file(nc.alice, "q3.txt") == expected
    assert nc.read_file(nc.alice, "draft.txt") == b"draft"
