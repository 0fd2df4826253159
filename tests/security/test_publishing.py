"""Who will see this (ADR 0058), on the real Nextcloud 29 (Talk 19, Deck 1.13) and 34 (Talk 24,
Deck 1.18): a post to a conversation listed to every user asks; the question shows the whole
text with its hidden characters named; a conversation made public while the user is asked voids
the approval; Deck comments, file comments and new tag names ask by the same rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import ClientSession

from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details

ROOM = "/ocs/v2.php/apps/spreed/api/v4/room"
CHAT = "/ocs/v2.php/apps/spreed/api/v1/chat"
DECK = "/index.php/apps/deck/api/v1.0"
SHARES = "/ocs/v2.php/apps/files_sharing/api/v1/shares"
CAROL_PASSWORD = "carol-login-password-4711"


def ocs(nextcloud: Nextcloud, login: Login, method: str, path: str, **kwargs: Any) -> Any:
    """`ocs.data` (or the JSON of a REST call) of a call made by `login` itself."""
    with nextcloud.http(login) as client:
        params = {"format": "json", **kwargs.pop("params", {})}
        headers = {"Accept": "application/json", "OCS-APIRequest": "true"}
        answer = client.request(method, path, params=params, headers=headers, **kwargs)
    assert answer.status_code in (200, 201), (answer.status_code, answer.text[:300])
    body = answer.json()
    return body["ocs"]["data"] if isinstance(body, dict) and "ocs" in body else body


def posted(nextcloud: Nextcloud, login: Login, token: str) -> list[str]:
    found = ocs(nextcloud, login, "GET", f"{CHAT}/{token}", params={"lookIntoFuture": 0, "limit": 200})
    return [m["message"] for m in sorted(found, key=lambda m: m["id"]) if m["messageType"] == "comment"]


def add_carol(nextcloud: Nextcloud) -> Login:
    """A third user, carol, kept in a seed of her own: this resets the instance, so it comes
    before anything else the test makes there."""
    assert nextcloud.instance is not None
    app_password = nextcloud.instance.reset_with_users({"carol": CAROL_PASSWORD})["carol"]
    return Login("carol", CAROL_PASSWORD, app_password, display_name="carol")


@asynccontextmanager
async def session_of(nextcloud: Nextcloud, toolsets: str, human: Human) -> AsyncIterator[ClientSession]:
    config = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets=toolsets)
    with running_app(config) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            yield session


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)


def open_conversation(nextcloud: Nextcloud) -> str:
    """Admin's group conversation with only alice, listed to every user of the instance."""
    token = str(
        ocs(nextcloud, nextcloud.admin, "POST", ROOM, json={"roomType": 2, "roomName": "Open"})["token"]
    )
    ocs(
        nextcloud,
        nextcloud.admin,
        "POST",
        f"{ROOM}/{token}/participants",
        json={"newParticipant": "alice", "source": "users"},
    )
    ocs(nextcloud, nextcloud.admin, "PUT", f"{ROOM}/{token}/listable", json={"scope": 1})
    return token


async def test_a_post_to_a_conversation_listed_to_every_user_asks_first(apps_nextcloud: Nextcloud) -> None:
    """Finding 1: `listable` was never read; carol, not a participant, could join and read."""
    nc = apps_nextcloud
    carol = add_carol(nc)
    token = open_conversation(nc)
    assert token in {r["token"] for r in ocs(nc, carol, "GET", "/ocs/v2.php/apps/spreed/api/v4/listed-room")}
    human = Human(action="decline")
    async with session_of(nc, "talk", human) as session:
        declined = await session.call_tool("nc_talk_post_message", {"token": token, "text": "salary list"})
    assert refusal_details(declined)["decision"] == "declined"
    [question] = human.questions
    assert 'the group conversation "Open"' in question
    assert "every user of this Nextcloud (it is listed to them" in question
    assert posted(nc, nc.admin, token) == []


async def test_the_question_shows_the_whole_text_and_names_hidden_characters(
    apps_nextcloud: Nextcloud,
) -> None:
    """Finding 2: 300 of 32,000 characters were shown; a payload below 40 line feeds and a
    right-to-left override went out unseen."""
    nc = apps_nextcloud
    token = open_conversation(nc)
    payload = "a" * 300 + "\n" * 40 + "\u202egnp.exe PAYLOAD"
    longest = "b" * 20_000 + "middle" + "c" * 11_000 + "THE END"
    human = Human(action="decline")
    async with session_of(nc, "talk", human) as session:
        for text in (payload, longest):
            assert (await session.call_tool("nc_talk_post_message", {"token": token, "text": text})).is_error
    shown, summary = human.questions
    assert "PAYLOAD" in shown
    assert "⟦U+202E⟧" in shown
    assert "⟦39 empty lines⟧" in shown
    assert "1 invisible or text-direction character" in shown
    assert "THE END" in summary
    assert "characters 3,001 to 30,413 of 31,013 (lines 1 to 1) are not shown here" in summary
    assert len(summary) < 5_000
    assert posted(nc, nc.admin, token) == []


async def test_a_conversation_made_public_while_the_user_is_asked_is_not_posted_to(
    apps_nextcloud: Nextcloud,
) -> None:
    """Finding 3: only the participants were compared after the approval."""
    nc = apps_nextcloud
    add_carol(nc)
    token = ocs(nc, nc.alice, "POST", ROOM, json={"roomType": 2, "roomName": "Team"})["token"]
    for user in ("admin", "carol"):
        ocs(
            nc,
            nc.alice,
            "POST",
            f"{ROOM}/{token}/participants",
            json={"newParticipant": user, "source": "users"},
        )

    async def made_public() -> None:
        ocs(nc, nc.alice, "POST", f"{ROOM}/{token}/public")

    human = Human(while_asked=made_public)
    async with session_of(nc, "talk", human) as session:
        changed = await session.call_tool("nc_talk_post_message", {"token": token, "text": "for the team"})
    assert "changed while you were being asked" in error_text(changed)
    assert "2 people: admin, carol" in human.questions[0]
    assert posted(nc, nc.admin, token) == []


async def test_a_talk_post_mentioning_someone_outside_the_conversation_asks_first(
    apps_nextcloud: Nextcloud,
) -> None:
    """The one mention rule (tools/_audience.mentions) in Talk as in comments: a post in a
    one-to-one conversation reaches one other person and is sent unasked, unless it mentions a
    third (ADR 0061)."""
    nc = apps_nextcloud
    add_carol(nc)
    token = str(ocs(nc, nc.alice, "POST", ROOM, json={"roomType": 1, "invite": "admin"})["token"])
    human = Human(action="decline")
    async with session_of(nc, "talk", human) as session:
        plain = await session.call_tool("nc_talk_post_message", {"token": token, "text": "@admin lunch?"})
        assert not plain.is_error, plain.content
        assert human.questions == []
        mentioned = {"token": token, "text": 'lunch with @carol and @"carol"?'}
        declined = await session.call_tool("nc_talk_post_message", mentioned)
    assert refusal_details(declined)["decision"] == "declined"
    [question] = human.questions
    assert "2 people: admin, carol (mentioned)" in question
    assert posted(nc, nc.admin, token) == ["{mention-user1} lunch?"]  # Talk keeps a mention as a placeholder


def _deck(nc: Nextcloud, method: str, path: str, body: Any = None) -> Any:
    return ocs(nc, nc.alice, method, f"{DECK}{path}", json=body)


async def test_deck_comments_ask_by_the_same_rule_and_a_share_meanwhile_is_refused(
    apps_nextcloud: Nextcloud,
) -> None:
    """Worth deciding, decided: a comment reaches everyone on the board; with one other member it
    is posted, with a group it asks, and the board shared further while asked voids it."""
    nc = apps_nextcloud
    add_carol(nc)
    board = _deck(nc, "POST", "/boards", {"title": "Plans", "color": "0082c9"})["id"]
    stack = _deck(nc, "POST", f"/boards/{board}/stacks", {"title": "To do", "order": 1})["id"]
    card = _deck(nc, "POST", f"/boards/{board}/stacks/{stack}/cards", {"title": "Budget"})["id"]
    _deck(
        nc,
        "POST",
        f"/boards/{board}/acl",
        {
            "type": 0,
            "participant": "admin",
            "permissionEdit": True,
            "permissionShare": False,
            "permissionManage": False,
        },
    )
    human = Human()
    async with session_of(nc, "deck", human) as session:
        quiet = structured(
            await session.call_tool("nc_deck_add_comment", {"card_id": card, "message": "ok?"})
        )
        assert human.questions == []  # one other person: as a one-to-one message
        assert quiet["message"] == "ok?"

        async def shared_with_carol() -> None:
            _deck(
                nc,
                "POST",
                f"/boards/{board}/acl",
                {
                    "type": 0,
                    "participant": "carol",
                    "permissionEdit": False,
                    "permissionShare": False,
                    "permissionManage": False,
                },
            )

        human.while_asked = shared_with_carol
        # a mention of someone outside the board makes it a publication
        result = await session.call_tool("nc_deck_add_comment", {"card_id": card, "message": 'ask @"carol"'})
        assert "changed while you were being asked" in error_text(result)
        [question] = human.questions
        assert 'the card "Budget" on the board "Plans"' in question
        assert "carol (mentioned)" in question
        human.while_asked = None
        again = structured(
            await session.call_tool("nc_deck_add_comment", {"card_id": card, "message": "all set"})
        )
        assert again["message"] == "all set"
        assert "2 people: admin, carol" in human.questions[1]
    comments = ocs(nc, nc.alice, "GET", f"/ocs/v2.php/apps/deck/api/v1.0/cards/{card}/comments")
    assert sorted(c["message"] for c in comments) == ["all set", "ok?"]


async def test_a_file_comment_asks_when_the_file_has_a_public_link(apps_nextcloud: Nextcloud) -> None:
    """Worth deciding, decided: a comment on a shared file reaches everyone it is shared with."""
    nc = apps_nextcloud
    nc.put_file(nc.alice, "Shared/plan.txt", b"plan")
    human = Human(action="decline")
    async with session_of(nc, "comments", human) as session:
        quiet = await session.call_tool("nc_comments_add", {"path": "Shared/plan.txt", "message": "draft"})
        assert not quiet.is_error
        assert human.questions == []
        ocs(nc, nc.alice, "POST", SHARES, data={"path": "/Shared", "shareType": 3})
        declined = await session.call_tool("nc_comments_add", {"path": "Shared/plan.txt", "message": "final"})
    assert refusal_details(declined)["decision"] == "declined"
    [question] = human.questions
    assert "the comments of /Shared/plan.txt" in question
    assert "anyone with a public link to /Shared" in question
    assert '"final"' in question


async def test_creating_a_tag_asks_because_every_user_sees_its_name(apps_nextcloud: Nextcloud) -> None:
    """Worth deciding, decided: `create=true` publishes a name to the whole instance."""
    nc = apps_nextcloud
    nc.put_file(nc.alice, "memo.txt", b"memo")
    human = Human(action="decline")
    async with session_of(nc, "tags", human) as session:
        arguments = {"path": "memo.txt", "tag": "layoffs-2027", "create": True}
        declined = await session.call_tool("nc_tags_assign", arguments)
    assert refusal_details(declined)["decision"] == "declined"
    assert "every user of this Nextcloud" in human.questions[0]
    with nc.http(nc.admin) as client:
        tags = client.request(
            "PROPFIND",
            "/remote.php/dav/systemtags/",
            headers={"Depth": "1"},
            content=b'<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
            b"<d:prop><oc:display-name/></d:prop></d:propfind>",
        )
    assert "layoffs-2027" not in tags.text
