"""Our app clients read what the real Nextcloud 29 and 34 answered (tests/fixtures/apps/<29|34>/,
written by `python -m tests.record_apps`): each recorded answer is fed through the client that sends
that request, the request checked against the recorded one (path, query and JSON body), and the
parsed values asserted. No Nextcloud needed; the double does not play these apps."""

from __future__ import annotations

import re

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.toolsets.collectives.client import (
    COLLECTIVES_TOO_OLD,
    CollectivesClient,
    CollectivesUnavailable,
)
from nextcloud_mcp_server.toolsets.talk.client import TalkAppMissing, TalkClient
from tests import http_mock
from tests.apps.replayed import replay
from tests.recordings import APPS, load_app

ALICE = BasicCredential("alice", "pw")
THUMBS = "\N{THUMBS UP SIGN}"

both = pytest.mark.parametrize("version", ["29", "34"])


def _token(name: str, version: str) -> str:
    token = load_app(name, version).json()["ocs"]["data"]["token"]
    assert isinstance(token, str)
    return token


# --- Talk ---------------------------------------------------------------------------------------


@both
@http_mock.mock
async def test_talk_conversations_and_their_participants(version: str, http: NextcloudHTTP) -> None:
    replay(version, "talk_conversations")
    replay(version, "talk_conversation")
    replay(version, "talk_participants")
    talk = TalkClient(http, ALICE)
    listed = {c.name: c for c in await talk.conversations()}
    group = listed["Trip planning"]
    assert (group.token, group.kind, group.can_post, group.actor_id) == ("tok1", "group", True, "alice")
    # admin's reply is unread, and a reply to her message counts as a mention of her
    assert (group.with_user, group.actor_type, group.unread, group.mentioned) == (
        None,
        "users",
        1,
        True,
    )
    # Talk makes two of its own: what is new in Talk, and a note to oneself (34 a sample too)
    assert (listed["Talk updates \N{WHITE HEAVY CHECK MARK}"].kind, listed["Note to self"].kind) == (
        "changelog",
        "note-to-self",
    )
    assert len(listed) == (3 if version == "29" else 4)
    assert await talk.conversation("tok1") == group
    people = [(p.actor_type, p.actor_id, p.name) for p in await talk.participants("tok1")]
    assert people == [("users", "alice", "Alice"), ("users", "admin", "admin")]


@both
@http_mock.mock
async def test_talk_messages_with_mentions_replies_and_reactions(version: str, http: NextcloudHTTP) -> None:
    """The newest page hides the reaction's system entry; the mention reads `@admin`; the reply
    points at its parent and carries the reaction."""
    replay(version, "talk_messages_newest")
    page = await TalkClient(http, ALICE).messages("tok1", limit=20)
    shown = [(m.id, m.author_id, m.author_name, m.text, m.system, m.reply_to) for m in page.messages]
    assert shown == [
        (1, "alice", "Alice", "You created the conversation", True, None),
        (2, "alice", "Alice", "You added admin", True, None),
        (3, "alice", "Alice", "Train at 9, @admin?", False, None),
        (4, "admin", "admin", "Yes, see you there", False, 3),
    ]
    assert [m.reactions for m in page.messages] == [{}, {}, {}, {THUMBS: 1}]
    assert page.cursor == 1  # Talk's X-Chat-Last-Given: the oldest given, where an older page starts
    assert all(m.timestamp > 1_700_000_000 for m in page.messages)


@both
@http_mock.mock
async def test_talk_pages_since_and_before_a_message(version: str, http: NextcloudHTTP) -> None:
    replay(version, "talk_messages_since")
    replay(version, "talk_messages_before")
    replay(version, "talk_messages_since_nothing_new")
    talk = TalkClient(http, ALICE)
    newer = await talk.messages("tok1", limit=20, since_id=3)
    assert ([m.id for m in newer.messages], newer.cursor) == ([4], 5)  # 5 is the hidden reaction
    older = await talk.messages("tok1", limit=2, before_id=4)
    assert ([m.text for m in older.messages], older.cursor) == (["You added admin", "Train at 9, @admin?"], 2)
    nothing = await talk.messages("tok1", limit=20, since_id=5)  # 304: nothing newer
    assert (nothing.messages, nothing.cursor) == ([], 5)


@both
@http_mock.mock
async def test_talk_post_reply_react_and_mention(version: str, http: NextcloudHTTP) -> None:
    replay(version, "talk_post", "talk_post_reply", "talk_post_reply_to_missing")
    replay(version, "talk_react", "talk_react_not_an_emoji")
    replay(version, "talk_mentions")
    talk = TalkClient(http, ALICE)
    posted = await talk.post("tok1", "Train at 9, @admin?")
    assert (posted.id, posted.author_id, posted.text, posted.reply_to) == (
        3,
        "alice",
        "Train at 9, @admin?",
        None,
    )
    reply = await talk.post("tok1", "Yes, see you there", reply_to=3)  # admin's, in the recording
    assert (reply.id, reply.author_id, reply.reply_to) == (4, "admin", 3)
    with pytest.raises(InvalidInput, match="message 999999 is not in this conversation"):
        await talk.post("tok1", "?", reply_to=999999)
    assert await talk.react("tok1", 4, THUMBS) == {THUMBS: 1}
    with pytest.raises(InvalidInput, match="one emoji"):
        await talk.react("tok1", 4, "yes")
    [admin] = await talk.mentionable("tok1", "ad", 10)
    assert (admin.id, admin.name, admin.kind) == ("admin", "admin", "users")


@both
@http_mock.mock
async def test_talk_group_and_one_to_one_conversations_are_made(version: str, http: NextcloudHTTP) -> None:
    rooms = (
        "talk_create_group",
        "talk_open_one_to_one",
        "talk_open_one_to_one_again",
        "talk_open_one_to_one_unknown",
    )
    replay(version, *rooms)  # all POST .../room, in this order
    replay(version, "talk_add_participant", "talk_add_participant_unknown")
    replay(version, "talk_conversation_missing")
    talk = TalkClient(http, ALICE)
    room, missing = await talk.create_group("Trip planning", ["admin", "nobody"])
    assert (room.token, room.name, room.kind, missing) == ("tok1", "Trip planning", "group", ["nobody"])
    one = await talk.open_one_to_one("admin")
    assert (one.kind, one.with_user, one.name) == ("one-to-one", "admin", "admin")
    assert one.token == _token("talk_open_one_to_one", version)
    assert (await talk.open_one_to_one("admin")).token == one.token  # the same conversation again
    with pytest.raises(InvalidInput, match="no user 'nobody'"):
        await talk.open_one_to_one("nobody")
    with pytest.raises(NotFound, match="no such conversation") as missing_room:
        await talk.conversation("zz99zz99")
    assert not isinstance(missing_room.value, TalkAppMissing)  # Talk is there: the room is not


# --- Collectives --------------------------------------------------------------------------------


def _collectives(http: NextcloudHTTP) -> CollectivesClient:
    return CollectivesClient(OCSClient(http, ALICE), WebDAVClient(http, ALICE, "alice"))


def _ids(version: str = "34") -> tuple[int, int]:
    """The recorded collective's id and its landing page's."""
    path = load_app("collectives_create_page", version).path or ""
    found = re.search(r"/collectives/(\d+)/pages/(\d+)", path)
    assert found, path
    return int(found.group(1)), int(found.group(2))


@http_mock.mock
async def test_collectives_34_page_tree(http: NextcloudHTTP) -> None:
    """A collective's landing page gets a page, which gets two subpages (one title taken): the
    parent becomes `Meetings/Readme.md`, a `/` in a title is stored as `-`, a taken title numbered."""
    collective, landing = _ids()
    replay("34", "collectives_list")
    replay("34", "collectives_pages_new", "collectives_pages")
    replay("34", "collectives_create_page")
    replay("34", "collectives_create_subpage", "collectives_create_page_taken")
    replay("34", "collectives_page")
    client = _collectives(http)
    [wiki] = await client.collectives()
    assert (wiki.id, wiki.name, wiki.emoji, wiki.can_edit) == (collective, "Team Wiki", None, True)
    [first] = await client.pages(collective)
    assert (first.id, first.title, first.parent_id) == (landing, "Landing page", 0)
    assert first.file == ".Collectives/Team Wiki/Readme.md"
    meetings = await client.create_page(collective, landing, "Meetings")
    assert (meetings.title, meetings.parent_id, meetings.file) == (
        "Meetings",
        landing,
        ".Collectives/Team Wiki/Meetings.md",
    )
    weekly = await client.create_page(collective, meetings.id, "2026/11 Weekly")
    again = await client.create_page(collective, meetings.id, "2026-11 Weekly")
    assert (weekly.title, again.title) == ("2026-11 Weekly", "2026-11 Weekly (2)")
    assert again.file == ".Collectives/Team Wiki/Meetings/2026-11 Weekly (2).md"
    tree = {p.title: p for p in await client.pages(collective)}
    parents = {title: page.parent_id for title, page in tree.items()}
    assert parents == {
        "Landing page": 0,
        "Meetings": landing,
        "2026-11 Weekly": meetings.id,
        "2026-11 Weekly (2)": meetings.id,
    }
    assert tree["Meetings"].file == ".Collectives/Team Wiki/Meetings/Readme.md"  # it has subpages now
    assert sorted(tree["Meetings"].subpage_order) == sorted([weekly.id, again.id])
    assert tree["Landing page"].last_user_id == "alice"
    assert await client.page(collective, meetings.id) == tree["Meetings"]


@http_mock.mock
async def test_collectives_34_missing_page_and_collective_say_so(http: NextcloudHTTP) -> None:
    collective, _ = _ids()
    replay("34", "collectives_page_missing")
    replay("34", "collectives_collective_missing")
    client = _collectives(http)
    with pytest.raises(NotFound, match="Collectives says: File not found: 999999"):
        await client.page(collective, 999999)
    with pytest.raises(NotFound, match="Collectives says: Collective not found: 77777") as caught:
        await client.pages(77777)
    assert not isinstance(caught.value, CollectivesUnavailable)


@http_mock.mock
async def test_collectives_29_has_no_api_and_is_told_too_old(http: NextcloudHTTP) -> None:
    """Collectives 2.18 (Nextcloud 29): the OCS route is unknown, the app is in the navigation."""
    replay("29", "collectives_list_no_api")
    replay("29", "collectives_navigation")
    with pytest.raises(CollectivesUnavailable) as caught:
        await _collectives(http).collectives()
    assert COLLECTIVES_TOO_OLD in str(caught.value)


# --- the recordings themselves ------------------------------------------------------------------


def test_the_recordings_carry_no_credentials_cookies_or_real_ports() -> None:
    files = sorted(APPS.glob("*/*.txt"))
    assert {f.parent.name for f in files} == {"29", "34"}
    assert len(files) >= 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "authorization" not in text.lower(), path
        assert re.findall(r"### ARG: (\w+):(\S+)\n### RESPONSE", text)[0][1] == "REDACTED", path
        for cookie in re.findall(r"(?im)^set-cookie: [^=]+=([^;\n]*)", text):
            assert cookie == "REDACTED", path
        hosts = set(re.findall(r"https?:(?:\\?/){2}(?:127\.0\.0\.1|localhost):\d+", text))
        assert hosts <= {"http://127.0.0.1:8080", "http:\\/\\/127.0.0.1:8080"}, (path, hosts)
