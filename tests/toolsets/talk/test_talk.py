"""The Talk toolset end to end: the SDK's client, the real server, the real Nextcloud 29 (Talk
19.0.15) and 34 (Talk 24.0.0-rc.1). The other side of each conversation (admin, bob) acts and is
checked through Talk's own OCS API, as their own Talk clients would."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.tools import enabled_tools
from nextcloud_mcp_server.toolsets.talk.models import conversation_of, message_of, resolve
from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, structured, toolset_session
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

ROOM = "/ocs/v2.php/apps/spreed/api/v4/room"
CHAT = "/ocs/v2.php/apps/spreed/api/v1/chat"
BOB_PASSWORD = "bob-login-password-4711"
TOOLS = {
    "nc_talk_list_conversations": True,
    "nc_talk_read_messages": True,
    "nc_talk_list_mentionable": True,
    "nc_talk_post_message": False,
    "nc_talk_react": False,
    "nc_talk_create_conversation": False,
    "nc_talk_list_participants": True,
    "nc_talk_mark_read": False,
}


def ocs(nextcloud: Nextcloud, login: Login, method: str, path: str, **kwargs: Any) -> Any:
    """`ocs.data` of a Talk call made by `login` itself (not through our server)."""
    with nextcloud.http(login) as client:
        params = {"format": "json", **kwargs.pop("params", {})}
        answer = client.request(method, path, params=params, headers={"Accept": "application/json"}, **kwargs)
    assert answer.status_code in (200, 201), (answer.status_code, answer.text[:300])
    return answer.json()["ocs"]["data"]


def chat_of(nextcloud: Nextcloud, login: Login, token: str) -> list[dict[str, Any]]:
    """The conversation's messages as `login` sees them, oldest first (history, no waiting)."""
    found = ocs(nextcloud, login, "GET", f"{CHAT}/{token}", params={"lookIntoFuture": 0, "limit": 200})
    return sorted(found, key=lambda m: m["id"])


def comments(nextcloud: Nextcloud, login: Login, token: str) -> list[str]:
    return [m["message"] for m in chat_of(nextcloud, login, token) if m["messageType"] == "comment"]


def add_bob(nextcloud: Nextcloud) -> Login:
    """A third user, bob (with an app password to act as him), kept in a seed of his own: this
    resets the instance, so it comes before anything else the test makes there."""
    assert nextcloud.instance is not None
    app_password = nextcloud.instance.reset_with_users({"bob": BOB_PASSWORD})["bob"]
    return Login("bob", BOB_PASSWORD, app_password, display_name="bob")


def alice(
    nextcloud: Nextcloud, human: Human | None = None, **settings: Any
) -> AbstractAsyncContextManager[ClientSession]:
    """Alice's MCP session with the talk toolset (the reading deadline far below Talk's 30 s
    long poll, so a read that waited for new messages would fail)."""
    return toolset_session(nextcloud, "talk", human, nextcloud_request_deadline_seconds=20, **settings)


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)


def test_the_talk_tools_with_talk_scopes_only_when_chosen() -> None:
    def offered(toolsets: str, level: str = "destructive") -> dict[str, Any]:
        config = load_settings(
            env_file=None,
            nextcloud_host="https://cloud.example.com",
            nextcloud_username="alice",
            nextcloud_mcp_toolsets=toolsets,
            nextcloud_mcp_permissions=level,
        )
        return {s.name: s for s in enabled_tools(config) if s.toolset == "talk"}

    assert offered("default") == {}
    specs = offered("talk")
    assert {name: spec.read_only for name, spec in specs.items()} == TOOLS
    for spec in specs.values():
        assert spec.scopes == (("talk:read",) if spec.read_only else ("talk:write",))
        assert not spec.destructive
        assert len(spec.description) < 200  # short: the list a model reads stays small
    assert set(offered("talk", "read")) == {name for name, ro in TOOLS.items() if ro}


def test_placeholders_from_a_hostile_nextcloud_stay_bounded_text() -> None:
    """Talk's `messageParameters` fill `{placeholders}`; whatever they hold, the text stays text."""
    user = {"type": "user", "id": "bob", "name": "Bob"}
    assert (
        resolve("hi {mention-user1} {file}", {"mention-user1": user, "file": {"name": "a.pdf"}})
        == "hi @Bob a.pdf"
    )
    assert resolve("{actor} joined", {"actor": user}) == "Bob joined"  # not a mention
    assert resolve("{mention-user1}", {"mention-user1": {"type": "file", "name": "x"}}) == "x"
    assert resolve("{a} {b}", []) == "{a} {b}"  # PHP's empty array
    assert resolve("{a} {b}", {"a": "not an object", "b": None}) == "{a} {b}"
    assert resolve("{a}", {"a": {"name": "{b}"}, "b": {"name": "loop"}}) == "{b}"  # filled once, not again
    assert len(resolve("{a}", {"a": {"name": "n" * 100_000}})) == 200
    odd = message_of({"id": "7", "timestamp": "soon", "reactions": {"👍": "x"}, "parent": {"id": None}})
    assert (odd.id, odd.timestamp, odd.reactions, odd.reply_to) == (7, 0, {"👍": 0}, None)
    room = conversation_of(
        {"token": "abcd", "type": "9" * 400, "permissions": [], "lastActivity": 1e300}, "h"
    )
    assert (room.kind, room.can_post, room.last_activity) == ("other", False, 2**63 - 1)


async def test_one_to_one_post_reply_read_since_and_react(apps_nextcloud: Nextcloud) -> None:
    nc, human = apps_nextcloud, Human()
    async with alice(nc, human) as session:
        created = structured(await session.call_tool("nc_talk_create_conversation", {"users": ["admin"]}))
        assert created["kind"] == "one-to-one"
        token = created["token"]

        posted = structured(
            await session.call_tool("nc_talk_post_message", {"token": token, "text": 'Lunch, @"admin"?'})
        )["message"]
        assert human.questions == []  # one other person: no approval asked
        assert token in {room["token"] for room in ocs(nc, nc.admin, "GET", ROOM)}  # admin has it too
        assert (posted["author_id"], posted["text"]) == ("alice", "Lunch, @admin?")
        [seen] = [m for m in chat_of(nc, nc.admin, token) if m["id"] == posted["id"]]
        assert seen["actorId"] == "alice"
        assert seen["messageParameters"]["mention-user1"]["id"] == "admin"  # a real mention

        reply = ocs(
            nc,
            nc.admin,
            "POST",
            f"{CHAT}/{token}",
            json={"message": 'Yes @"alice"!', "replyTo": posted["id"]},
        )
        people = structured(await session.call_tool("nc_talk_list_participants", {"token": token}))
        assert sorted((p["id"], p["kind"]) for p in people["participants"]) == [
            ("admin", "users"),
            ("alice", "users"),
        ]
        assert people["total"] == 2

        def unread() -> int:
            [mine] = [r for r in ocs(nc, nc.alice, "GET", ROOM) if r["token"] == token]
            return int(mine["unreadMessages"])

        assert unread() == 1  # admin's reply; reading through the tools leaves the marker alone
        marked = structured(await session.call_tool("nc_talk_mark_read", {"token": token}))
        assert (marked["token"], marked["unread"]) == (token, 0)
        assert unread() == 0
        since = structured(
            await session.call_tool("nc_talk_read_messages", {"token": token, "since_id": posted["id"]})
        )
        [got] = since["messages"]
        assert (got["id"], got["author_id"], got["text"], got["reply_to"]) == (
            reply["id"],
            "admin",
            "Yes @Alice!",
            posted["id"],
        )
        assert got["time"].endswith("Z")
        assert since["newest_id"] == reply["id"]
        nothing = structured(
            await session.call_tool("nc_talk_read_messages", {"token": token, "since_id": since["newest_id"]})
        )
        assert (nothing["messages"], nothing["newest_id"]) == ([], reply["id"])  # no wait for new ones

        reacted = structured(
            await session.call_tool(
                "nc_talk_react", {"token": token, "message_id": reply["id"], "emoji": "👍"}
            )
        )
        assert reacted["reactions"] == {"👍": 1}
        [liked] = [m for m in chat_of(nc, nc.admin, token) if m["id"] == reply["id"]]
        assert liked["reactions"] == {"👍": 1}

        latest = structured(await session.call_tool("nc_talk_read_messages", {"token": token, "limit": 2}))
        # the reaction's own entry is hidden, as Talk's clients hide it
        assert [m["text"] for m in latest["messages"]] == ["Lunch, @admin?", "Yes @Alice!"]
        assert latest["messages"][1]["reactions"] == {"👍": 1}
        older = structured(
            await session.call_tool(
                "nc_talk_read_messages", {"token": token, "before_id": latest["oldest_id"], "limit": 10}
            )
        )
        assert older["messages"]
        assert all(m["system"] for m in older["messages"])
        assert all(m["id"] < posted["id"] for m in older["messages"])

        listed = structured(await session.call_tool("nc_talk_list_conversations", {}))
        [room] = [r for r in listed["conversations"] if r["token"] == token]
        assert (room["kind"], room["with_user"], room["can_post"]) == ("one-to-one", "admin", True)
        again = structured(await session.call_tool("nc_talk_create_conversation", {"users": ["admin"]}))
        assert again["token"] == token  # the existing one, not a second

        mentionable = structured(await session.call_tool("nc_talk_list_mentionable", {"token": token}))
        assert {"id": "admin", "name": "admin", "kind": "users", "write": '@"admin"'} in mentionable[
            "mentionable"
        ]


async def test_a_group_post_waits_for_the_users_approval(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    bob = add_bob(nc)
    human = Human(action="decline")
    async with alice(nc, human) as session:
        pair = structured(
            await session.call_tool("nc_talk_create_conversation", {"users": ["admin"], "name": "Pair"})
        )
        assert pair["kind"] == "group"
        structured(
            await session.call_tool("nc_talk_post_message", {"token": pair["token"], "text": "just us"})
        )
        assert human.questions == []  # one other participant: like a one-to-one
        assert comments(nc, nc.admin, pair["token"]) == ["just us"]

        made = structured(
            await session.call_tool(
                "nc_talk_create_conversation", {"users": ["admin", "bob", "nobody-here"], "name": "Project"}
            )
        )
        assert (made["name"], made["kind"], made["not_added"]) == ("Project", "group", ["nobody-here"])
        token = made["token"]
        people = ocs(nc, nc.admin, "GET", f"{ROOM}/{token}/participants")
        assert {p["actorId"] for p in people} == {"alice", "admin", "bob"}

        declined = await session.call_tool("nc_talk_post_message", {"token": token, "text": "Deadline moved"})
        assert "declined" in error_text(declined)
        assert refusal_details(declined)["decision"] == "declined"
        [question] = human.questions
        assert 'the group conversation "Project", read by 2 people: admin, bob' in question
        assert '"Deadline moved"' in question
        assert comments(nc, nc.admin, token) == []  # nothing posted
        assert comments(nc, bob, token) == []

        human.action = "accept"
        posted = structured(
            await session.call_tool("nc_talk_post_message", {"token": token, "text": "Deadline moved"})
        )
        assert posted["message"]["text"] == "Deadline moved"
        assert comments(nc, bob, token) == ["Deadline moved"]
        assert len(human.questions) == 2


async def test_an_approval_does_not_cover_people_added_meanwhile(apps_nextcloud: Nextcloud) -> None:
    """A public conversation reaches anyone with its link, so even with one other participant the
    user is asked; someone joining while the user is asked voids the approval."""
    nc = apps_nextcloud
    add_bob(nc)
    token = ocs(nc, nc.alice, "POST", ROOM, json={"roomType": 2, "roomName": "Board"})["token"]
    ocs(
        nc,
        nc.alice,
        "POST",
        f"{ROOM}/{token}/participants",
        json={"newParticipant": "admin", "source": "users"},
    )
    ocs(nc, nc.alice, "POST", f"{ROOM}/{token}/public")

    async def bob_joins() -> None:
        ocs(
            nc,
            nc.alice,
            "POST",
            f"{ROOM}/{token}/participants",
            json={"newParticipant": "bob", "source": "users"},
        )

    human = Human(while_asked=bob_joins)
    async with alice(nc, human) as session:
        changed = await session.call_tool("nc_talk_post_message", {"token": token, "text": "for the board"})
    assert "changed while you were being asked" in error_text(changed)
    [question] = human.questions
    assert 'the public conversation "Board", read by 1 person: admin; and anyone with its link' in question
    assert "bob" in {p["actorId"] for p in ocs(nc, nc.admin, "GET", f"{ROOM}/{token}/participants")}
    assert comments(nc, nc.admin, token) == []


async def test_bad_input_is_refused_clearly_and_nothing_is_posted(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    async with alice(nc) as session:
        token = structured(await session.call_tool("nc_talk_create_conversation", {"users": ["admin"]}))[
            "token"
        ]
        cases = {
            "no such conversation": ("nc_talk_read_messages", {"token": "zzzzzzzz"}),
            "should match pattern": ("nc_talk_post_message", {"token": "../../cloud/users", "text": "x"}),
            "the message is empty": ("nc_talk_post_message", {"token": token, "text": "  \n"}),
            "at most 32000": ("nc_talk_post_message", {"token": token, "text": "x" * 32_001}),
            "is not in this conversation": (
                "nc_talk_post_message",
                {"token": token, "text": "x", "reply_to": 999999},
            ),
            "one emoji": ("nc_talk_react", {"token": token, "message_id": 1, "emoji": "notanemoji"}),
            "no user 'nobody-here'": ("nc_talk_create_conversation", {"users": ["nobody-here"]}),
            "give a name for a group": ("nc_talk_create_conversation", {"users": ["admin", "alice"]}),
            "not both": ("nc_talk_read_messages", {"token": token, "since_id": 1, "before_id": 5}),
            "less than or equal to 100": ("nc_talk_read_messages", {"token": token, "limit": 101}),
            "at most 50 items": ("nc_talk_create_conversation", {"users": ["admin"] * 51, "name": "x"}),
            "1 to 255 characters": ("nc_talk_create_conversation", {"users": ["admin"], "name": "a\nb"}),
        }
        for expected, (tool, arguments) in cases.items():
            text = error_text(await session.call_tool(tool, arguments))
            assert expected in text, (tool, text)
        other = ocs(nc, nc.admin, "POST", ROOM, json={"roomType": 2, "roomName": "Admins only"})["token"]
        assert "no such conversation" in error_text(
            await session.call_tool("nc_talk_read_messages", {"token": other})
        )  # a conversation alice is not in is not hers to read
    assert comments(nc, nc.alice, token) == []
    rooms = ocs(nc, nc.alice, "GET", ROOM)
    assert [r["name"] for r in rooms if r["type"] == 1] == ["admin"]  # none with nobody-here


async def test_long_messages_are_cut_and_say_so(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    async with alice(nc) as session:
        token = structured(await session.call_tool("nc_talk_create_conversation", {"users": ["admin"]}))[
            "token"
        ]
        # Talk 24 adds the other user of a one-to-one conversation at its first message
        structured(await session.call_tool("nc_talk_post_message", {"token": token, "text": "hi"}))
        ocs(nc, nc.admin, "POST", f"{CHAT}/{token}", json={"message": "ab" * 10_000})
        ocs(nc, nc.admin, "POST", f"{CHAT}/{token}", json={"message": "short {file} {mention-user1}"})
        read = structured(await session.call_tool("nc_talk_read_messages", {"token": token, "limit": 2}))
    long, short = read["messages"]
    assert long["cut"] is True
    assert len(long["text"]) == 4001
    assert long["text"].endswith("…")
    # braces a person typed are text, not placeholders
    assert (short["text"], short["cut"]) == ("short {file} {mention-user1}", False)


async def test_without_talk_the_tools_say_so(each_real_nextcloud: Nextcloud) -> None:
    async with alice(each_real_nextcloud) as session:
        result = await session.call_tool("nc_talk_list_conversations", {})
    assert "Talk is not installed or not enabled for you on this Nextcloud" in error_text(result)
