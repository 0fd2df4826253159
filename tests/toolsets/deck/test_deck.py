"""The deck toolset end to end: the SDK's client, the real server over streamable HTTP, and the real
Nextcloud 29 (Deck 1.13.10) and 34 (Deck 1.18.3). Boards are set up and every change is checked
through Deck's own API with alice's app password, never through our client."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from nextcloud_mcp_server.tools import all_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration

API = "/index.php/apps/deck/api/v1.0"
OCS = "/ocs/v2.php/apps/deck/api/v1.0"
DECK_TOOLS = {
    "nc_deck_list_boards": ("deck:read", True, False),
    "nc_deck_get_board": ("deck:read", True, False),
    "nc_deck_get_card": ("deck:read", True, False),
    "nc_deck_upcoming_cards": ("deck:read", True, False),
    "nc_deck_create_card": ("deck:write", False, False),
    "nc_deck_move_card": ("deck:write", False, False),
    "nc_deck_update_card": ("deck:write", False, False),
    "nc_deck_add_comment": ("deck:write", False, False),
    "nc_deck_delete_card": ("deck:write", False, True),
    "nc_deck_delete_board": ("deck:write", False, True),
    "nc_deck_create_board": ("deck:write", False, False),
    "nc_deck_update_board": ("deck:write", False, False),
    "nc_deck_delete_stack": ("deck:write", False, True),
    "nc_deck_delete_label": ("deck:write", False, True),
}


class Deck:
    """Deck's own API as alice (another device), for setting up and checking."""

    def __init__(self, nextcloud: Nextcloud) -> None:
        self.http = nextcloud.http(nextcloud.alice)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.http.request(method, path, **kwargs)
        assert answer.is_success, (method, path, answer.status_code, answer.text[:300])
        return answer.json()

    def board(self, title: str, stacks: tuple[str, ...] = ("To do", "Doing", "Done")) -> dict[str, Any]:
        board = self.call("POST", f"{API}/boards", json={"title": title, "color": "0082c9"})
        board["stack_ids"] = [
            self.call("POST", f"{API}/boards/{board['id']}/stacks", json={"title": t, "order": i})["id"]
            for i, t in enumerate(stacks)
        ]
        return dict(board)

    def card(self, board: dict[str, Any], stack: int, title: str, **fields: Any) -> dict[str, Any]:
        path = f"{API}/boards/{board['id']}/stacks/{stack}/cards"
        return dict(self.call("POST", path, json={"title": title, "type": "plain", "order": 999, **fields}))

    def get_card(self, board_id: int, stack_id: int, card_id: int) -> httpx.Response:
        return self.http.get(f"{API}/boards/{board_id}/stacks/{stack_id}/cards/{card_id}")

    def stacks(self, board_id: int) -> dict[int, list[int]]:
        """Card ids per stack, in the stack's order."""
        found = self.call("GET", f"{API}/boards/{board_id}/stacks")
        return {
            s["id"]: [c["id"] for c in sorted(s.get("cards") or [], key=lambda c: c["order"])] for s in found
        }

    def comments(self, card_id: int) -> list[str]:
        data = self.call("GET", f"{OCS}/cards/{card_id}/comments", params={"format": "json"})
        return [c["message"] for c in data["ocs"]["data"]]


@contextmanager
def deck(nextcloud: Nextcloud) -> Iterator[Deck]:
    api = Deck(nextcloud)
    try:
        yield api
    finally:
        api.http.close()


@asynccontextmanager
async def session(
    nextcloud: Nextcloud, human: Human | None = None, **settings: Any
) -> AsyncIterator[ClientSession]:
    config = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets="deck", **settings)
    answer = {"elicitation_callback": human.answer} if human else {}
    with running_app(config) as base:
        async with http_session(f"{base}/mcp", **answer) as client:
            yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def refused(client: ClientSession, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_the_deck_tools_are_offered_when_chosen_with_scopes_and_annotations(
    apps_nextcloud: Nextcloud,
) -> None:
    async with session(apps_nextcloud) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(DECK_TOOLS)
    for name, (scope, read_only, destructive) in DECK_TOOLS.items():
        tool = tools[name]
        assert tool.meta is not None
        assert tool.meta["nextcloud-mcp/scopes"] == [scope]
        # and, for a tool that asks, the link to the approval view (ADR 0077)
        assert tool.meta == {spec.name: spec.meta for spec in all_tools()}[name]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is read_only
        assert tool.annotations.destructive_hint is destructive
        assert 0 < len(tool.description or "") < 200, name


async def test_list_create_move_label_assign_comment_and_upcoming(apps_nextcloud: Nextcloud) -> None:
    """The issue's path: list boards, create a card, move it, comment on it; each checked in Deck."""
    with deck(apps_nextcloud) as api:
        board = api.board("Launch")
        todo, doing, done = board["stack_ids"]
        first = api.card(board, doing, "Already in progress")
        async with session(apps_nextcloud) as client:
            boards = await call(client, "nc_deck_list_boards")
            assert {"id": board["id"], "title": "Launch", "owner": "alice", "archived": False} in boards[
                "boards"
            ]

            created = await call(
                client,
                "nc_deck_create_card",
                board_id=board["id"],
                stack_id=todo,
                title="Write the press release",
                description="Two paragraphs",
                due="2026-12-01T17:00:00+01:00",
            )
            card_id = created["id"]
            stored = api.get_card(board["id"], todo, card_id).json()
            assert (stored["title"], stored["description"], stored["stackId"]) == (
                "Write the press release",
                "Two paragraphs",
                todo,
            )
            assert stored["duedate"].startswith("2026-12-01T16:00:00")

            shown = await call(client, "nc_deck_get_board", board_id=board["id"])
            assert [s["title"] for s in shown["stacks"]] == ["To do", "Doing", "Done"]
            assert [c["title"] for c in shown["stacks"][0]["cards"]] == ["Write the press release"]
            assert "alice" in shown["members"]
            assert "Later" in shown["labels"]

            # to the top of "Doing", above the card already there
            moved = await call(
                client,
                "nc_deck_move_card",
                board_id=board["id"],
                stack_id=todo,
                card_id=card_id,
                to_stack_id=doing,
            )
            assert moved["stack_id"] == doing
            assert api.stacks(board["id"]) == {todo: [], doing: [card_id, first["id"]], done: []}
            cut = await call(client, "nc_deck_get_board", board_id=board["id"], cards_per_stack=1)
            assert [len(s["cards"]) for s in cut["stacks"]] == [0, 1, 0]
            assert cut["stacks"][1]["card_count"] == 2
            assert cut["notes"] == [f"stack {doing}: 1 of 2 cards shown"]

            changed = await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=doing,
                card_id=card_id,
                add_labels=["later"],
                assign=["alice"],
            )
            assert (changed["labels"], changed["assigned"]) == (["Later"], ["alice"])
            stored = api.get_card(board["id"], doing, card_id).json()
            assert [label["title"] for label in stored["labels"]] == ["Later"]
            assert [a["participant"]["uid"] for a in stored["assignedUsers"]] == ["alice"]

            comment = await call(client, "nc_deck_add_comment", card_id=card_id, message="Draft is in Files")
            assert comment["author"] == "alice"
            assert api.comments(card_id) == ["Draft is in Files"]
            detail = await call(
                client, "nc_deck_get_card", board_id=board["id"], stack_id=doing, card_id=card_id
            )
            assert [c["message"] for c in detail["comments"]] == ["Draft is in Files"]
            assert detail["description"] == "Two paragraphs"

            upcoming = await call(client, "nc_deck_upcoming_cards")
            assert [(c["id"], c["board"], c["stack_id"]) for c in upcoming["cards"]] == [
                (card_id, "Launch", doing)
            ]

            cleared = await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=doing,
                card_id=card_id,
                due="",
                remove_labels=["Later"],
                unassign=["alice"],
            )
            assert (cleared["due"], cleared["labels"], cleared["assigned"]) == (None, [], [])
            stored = api.get_card(board["id"], doing, card_id).json()
            assert (stored["duedate"], stored["labels"] or [], stored["assignedUsers"] or []) == (
                None,
                [],
                [],
            )

            # renamed, described, marked done and not done, as Deck's own API shows
            ids = {"board_id": board["id"], "stack_id": doing, "card_id": card_id}
            text = "Two paragraphs\n\nand a quote from the team"
            renamed = await call(
                client, "nc_deck_update_card", **ids, title="Publish the release", description=text, done=True
            )
            assert (renamed["title"], renamed["done"]) == ("Publish the release", True)
            stored = api.get_card(board["id"], doing, card_id).json()
            assert (stored["title"], stored["description"], stored["stackId"]) == (
                "Publish the release",
                text,
                doing,
            )
            assert stored["done"]
            await call(client, "nc_deck_update_card", **ids, done=False)
            assert api.get_card(board["id"], doing, card_id).json()["done"] is None
            # emptying the description asks; this client cannot be asked: refused, nothing changed
            said = await refused(client, "nc_deck_update_card", **ids, description="")
            assert f'Replace the description of card "Publish the release" ({len(text)} characters)' in said
            assert "this client cannot ask for it" in said
            assert api.get_card(board["id"], doing, card_id).json()["description"] == text


async def test_a_due_date_change_keeps_every_other_field(apps_nextcloud: Nextcloud) -> None:
    """Deck's card update replaces the whole card: what is not sent back is lost (`done`, and on
    Deck 1.18 the start date). The tool sends back everything as read."""
    with deck(apps_nextcloud) as api:
        board = api.board("Chores")
        todo = board["stack_ids"][0]
        card = api.card(board, todo, "Taxes", description="Receipts in the blue folder")
        path = f"{API}/boards/{board['id']}/stacks/{todo}/cards/{card['id']}"
        extra = {"startdate": "2026-11-20T08:00:00+00:00"} if apps_nextcloud.major >= 34 else {}
        before = {
            "title": "Taxes",
            "type": "plain",
            "owner": "alice",
            "description": "Receipts in the blue folder",
        }
        api.call("PUT", path, json={**before, "order": 0, "done": "2026-11-25T10:00:00+00:00", **extra})
        async with session(apps_nextcloud) as client:
            await call(
                client,
                "nc_deck_update_card",
                board_id=board["id"],
                stack_id=todo,
                card_id=card["id"],
                due="2026-12-24T12:00:00Z",
            )
        stored = api.get_card(board["id"], todo, card["id"]).json()
    assert stored["duedate"].startswith("2026-12-24T12:00:00")
    assert (stored["title"], stored["description"], stored["stackId"]) == (
        before["title"],
        before["description"],
        todo,
    )
    assert stored["done"]
    assert stored["done"].startswith("2026-11-25T10:00:00")
    if extra:
        assert stored["startdate"].startswith("2026-11-20T08:00:00")


async def test_a_card_named_in_the_wrong_place_or_bad_input_changes_nothing(
    apps_nextcloud: Nextcloud,
) -> None:
    with deck(apps_nextcloud) as api:
        board, other = api.board("Home"), api.board("Work")
        todo, doing, _ = board["stack_ids"]
        card = api.card(board, todo, "Paint the door")
        admin_board = Deck.__new__(Deck)
        admin_board.http = apps_nextcloud.http(apps_nextcloud.admin)
        secret = admin_board.board("Admin only")
        admin_board.http.close()
        ids = {"board_id": board["id"], "card_id": card["id"]}
        async with session(apps_nextcloud) as client:
            # a stack the card is not in: Deck itself would move the card there on an update
            said = await refused(
                client, "nc_deck_update_card", **ids, stack_id=doing, due="2026-12-01T10:00:00Z"
            )
            assert f"card {card['id']} is in stack {todo}, not in stack {doing}" in said
            said = await refused(
                client, "nc_deck_move_card", **ids, stack_id=todo, to_stack_id=other["stack_ids"][0]
            )
            assert f"stack {other['stack_ids'][0]} is not on board {board['id']}" in said
            said = await refused(client, "nc_deck_update_card", **ids, stack_id=todo, due="2026-12-01")
            assert "offset" in said
            said = await refused(client, "nc_deck_update_card", **ids, stack_id=todo, add_labels=["Urgent"])
            assert "'Urgent' is not a label" in said
            assert "'Later'" in said
            said = await refused(client, "nc_deck_add_comment", card_id=card["id"], message="x" * 1001)
            assert "at most 1000 characters" in said
            said = await refused(client, "nc_deck_add_comment", card_id=999999, message="Hello")
            assert "card 999999 does not exist, or it is not shared with you" in said
            said = await refused(
                client, "nc_deck_create_card", board_id=board["id"], stack_id=todo, title=" "
            )
            assert "must not be empty" in said
            said = await refused(
                client, "nc_deck_create_card", board_id=board["id"], stack_id=todo, title="x" * 256
            )
            assert "at most 255 characters" in said
            said = await refused(client, "nc_deck_get_board", board_id=secret["id"])
            assert "permission denied" in said
        stored = api.get_card(board["id"], todo, card["id"]).json()
        assert (stored["stackId"], stored["duedate"], stored["labels"] or []) == (todo, None, [])
        assert api.comments(card["id"]) == []
        assert api.stacks(board["id"])[todo] == [card["id"]]


async def test_deleting_a_card_a_stack_a_label_or_a_board_asks_the_human(apps_nextcloud: Nextcloud) -> None:
    """Each delete asks, bound to what it reads (a stack's cards and a label's cards, archived ones
    too); a decline leaves all in place."""
    with deck(apps_nextcloud) as api:
        board = api.board("Garden")
        todo, done = board["stack_ids"][0], board["stack_ids"][2]
        card = api.card(board, todo, "Cut the hedge")
        ids = {"board_id": board["id"], "stack_id": todo, "card_id": card["id"]}
        labels = api.call("GET", f"{API}/boards/{board['id']}")["labels"]
        later = next(lb["id"] for lb in labels if lb["title"] == "Later")
        old = api.card(board, done, "Last year's bulbs")
        for one, stack in ((card, todo), (old, done)):
            api.call(
                "PUT",
                f"{API}/boards/{board['id']}/stacks/{stack}/cards/{one['id']}/assignLabel",
                json={"labelId": later},
            )
        no = Human(approve=False)
        async with session(apps_nextcloud, human=no) as client:
            # Deck 1.13 has no archive route of its own: archived as a client would
            stored = {"board_id": board["id"], "stack_id": done, "card_id": old["id"]}
            await call(client, "nc_deck_update_card", **stored, archived=True)
            said = await refused(client, "nc_deck_delete_card", **ids)
            await refused(client, "nc_deck_delete_label", board_id=board["id"], label="later")
            await refused(client, "nc_deck_delete_stack", board_id=board["id"], stack_id=done)
        assert "Nothing was changed" in said
        assert no.questions == [
            'Delete the card "Cut the hedge" in stack "To do" of board "Garden"?',
            'Delete the label "Later" of the board "Garden"? It comes off the 2 cards that carry it.',
            'Delete the stack "Done" of the board "Garden" with its 1 cards (1 of them archived)?',
        ]
        assert api.stacks(board["id"])[todo] == [card["id"]]
        assert done in api.stacks(board["id"])
        assert "Later" in [lb["title"] for lb in api.call("GET", f"{API}/boards/{board['id']}")["labels"]]

        yes = Human()
        async with session(apps_nextcloud, human=yes) as client:
            gone = await call(client, "nc_deck_delete_label", board_id=board["id"], label="Later")
            assert (gone["id"], gone["cards"]) == (later, 2)
            read = api.get_card(board["id"], todo, card["id"]).json()
            assert read["labels"] in ([], None)
            assert "Later" not in [
                lb["title"] for lb in api.call("GET", f"{API}/boards/{board['id']}")["labels"]
            ]
            stack = await call(client, "nc_deck_delete_stack", board_id=board["id"], stack_id=done)
            assert (stack["title"], stack["cards"]) == ("Done", 1)
            assert done not in api.stacks(board["id"])
            assert (await call(client, "nc_deck_delete_card", **ids))["deleted"] is True
            assert api.stacks(board["id"])[todo] == []
            api.card(board, todo, "Water the roses")
            await call(client, "nc_deck_delete_board", board_id=board["id"])
        assert yes.questions[-1] == 'Delete the board "Garden" with its 2 stacks and 1 cards?'
        left = api.call("GET", f"{API}/boards")
        assert [b["id"] for b in left if b["id"] == board["id"] and not b["deletedAt"]] == []


async def test_a_card_changed_while_the_human_is_asked_is_not_deleted(apps_nextcloud: Nextcloud) -> None:
    """Deck's ETag changes once a second at most; a label added in the same second still counts."""
    with deck(apps_nextcloud) as api:
        board = api.board("Kitchen")
        todo = board["stack_ids"][0]
        card = api.card(board, todo, "Fix the tap")
        path = f"{API}/boards/{board['id']}/stacks/{todo}/cards/{card['id']}/assignLabel"
        label = api.call("GET", f"{API}/boards/{board['id']}")["labels"][0]["id"]

        async def on_the_phone() -> None:
            api.call("PUT", path, json={"labelId": label})

        human = Human(while_asked=on_the_phone)
        async with session(apps_nextcloud, human=human) as client:
            said = await refused(
                client, "nc_deck_delete_card", board_id=board["id"], stack_id=todo, card_id=card["id"]
            )
        assert "changed while you were being asked" in said
        assert api.stacks(board["id"])[todo] == [card["id"]]


async def test_without_deck_the_tools_say_so(apps_nextcloud: Nextcloud) -> None:
    assert apps_nextcloud.instance is not None
    apps_nextcloud.instance.occ("app:disable", "deck")  # back at the next test's reset
    # Nextcloud 34's PHP workers keep app settings cached up to 3 s (AppConfig's LOCAL_CACHE_TTL)
    with deck(apps_nextcloud) as api:
        deadline = time.monotonic() + 60
        while api.http.get(f"{API}/boards").status_code != 404:
            assert time.monotonic() < deadline, "Deck still answers a minute after occ disabled it"
    async with session(apps_nextcloud) as client:
        said = await refused(client, "nc_deck_list_boards")
    assert "Deck is not installed or not enabled for you on this Nextcloud" in said


async def test_a_board_with_stacks_and_labels_and_a_card_archived_and_moved_across_boards(
    apps_nextcloud: Nextcloud,
) -> None:
    """The issue's structure: a board created with its stacks and labels, renamed and grown; a card
    given a new label, archived and restored, then moved to another board: to one only its owner
    reads without a question, to one shared with a group after the human approves (a decline
    moves nothing). Every step is checked through Deck's own API."""
    with deck(apps_nextcloud) as api:
        human = Human(approve=False)
        async with session(apps_nextcloud, human=human) as client:
            made = await call(
                client, "nc_deck_create_board", title="Launch", stacks=["Ideas", "Doing"], labels=["Press"]
            )
            board_id = made["id"]
            assert made["url"] == f"{apps_nextcloud.url}/index.php/apps/deck/board/{board_id}"
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert stored["title"] == "Launch"
            assert "Press" in [label["title"] for label in stored["labels"]]
            assert [
                s["title"]
                for s in sorted(api.call("GET", f"{API}/boards/{board_id}/stacks"), key=lambda s: s["order"])
            ] == [
                "Ideas",
                "Doing",
            ]
            grown = await call(
                client,
                "nc_deck_update_board",
                board_id=board_id,
                title="Launch 2027",
                add_stacks=["Done"],
                add_labels=["press", "Web"],
            )
            assert grown["notes"] == ["the label 'press' was already on the board"]
            assert [s["title"] for s in grown["stacks"]] == ["Ideas", "Doing", "Done"]
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert (stored["title"], stored["archived"]) == ("Launch 2027", False)
            assert [label["title"] for label in stored["labels"]].count("Press") == 1
            assert "Web" in [label["title"] for label in stored["labels"]]
            ideas = grown["stacks"][0]["id"]

            card = await call(
                client, "nc_deck_create_card", board_id=board_id, stack_id=ideas, title="Teaser"
            )
            ids = {"board_id": board_id, "stack_id": ideas, "card_id": card["id"]}
            assert (
                card["url"] == f"{apps_nextcloud.url}/index.php/apps/deck/board/{board_id}/card/{card['id']}"
            )
            with apps_nextcloud.http(apps_nextcloud.alice) as page:  # Deck's own route for that page
                assert page.get(card["url"], headers={"Accept": "text/html"}).status_code == 200
            await call(client, "nc_deck_update_card", **ids, add_labels=["Press"])
            await call(client, "nc_deck_update_card", **ids, archived=True)
            stored = api.get_card(board_id, ideas, card["id"]).json()
            assert stored["archived"] is True
            assert [label["title"] for label in stored["labels"]] == ["Press"]
            assert api.stacks(board_id)[ideas] == []  # archived cards leave the board's listing
            await call(client, "nc_deck_update_card", **ids, archived=False)
            assert api.get_card(board_id, ideas, card["id"]).json()["archived"] is False

            # to a board only alice reads: moved at once, to the top, its label carried over by title
            quiet = api.board("Private", stacks=("Inbox",))
            inbox = quiet["stack_ids"][0]
            api.card(quiet, inbox, "Already here")
            moved = await call(client, "nc_deck_move_card", **ids, to_board_id=quiet["id"], to_stack_id=inbox)
            assert (moved["board_id"], moved["stack_id"]) == (quiet["id"], inbox)
            assert api.stacks(quiet["id"])[inbox][0] == card["id"]
            assert api.stacks(board_id)[ideas] == []
            stored = api.get_card(quiet["id"], inbox, card["id"]).json()
            assert [(label["title"], label["boardId"]) for label in stored["labels"]] == [
                ("Press", quiet["id"])
            ]
            assert human.questions == []

            # to a board shared with a group: asked; declined, nothing moved
            shared = api.board("Team", stacks=("Backlog",))
            api.call(
                "POST",
                f"{API}/boards/{shared['id']}/acl",
                json={
                    "type": 1,
                    "participant": "admin",
                    "permissionEdit": True,
                    "permissionShare": False,
                    "permissionManage": False,
                },
            )
            backlog = shared["stack_ids"][0]
            there = {"board_id": quiet["id"], "stack_id": inbox, "card_id": card["id"]}
            said = await refused(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert "Nothing was changed" in said
            assert human.questions == [
                'Move this card in your name in the board "Team" (from "Private"), read by 1 person: '
                'admin; and the members of the group admin?\n\n"Teaser"'
            ]
            assert api.stacks(shared["id"])[backlog] == []
            human.approve = True

            async def rewritten() -> None:  # what was shown changes while the person is asked
                body = {"title": "Teaser", "type": "plain", "owner": "alice", "description": "price: 9 EUR"}
                api.call("PUT", f"{API}/boards/{quiet['id']}/stacks/{inbox}/cards/{card['id']}", json=body)

            human.while_asked = rewritten
            said = await refused(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert "changed while you were being asked" in said
            assert api.stacks(shared["id"])[backlog] == []
            human.while_asked = None
            moved = await call(
                client, "nc_deck_move_card", **there, to_board_id=shared["id"], to_stack_id=backlog
            )
            assert api.stacks(shared["id"])[backlog] == [card["id"]]
            assert api.get_card(shared["id"], backlog, card["id"]).json()["stackId"] == backlog

            renamed = await call(
                client,
                "nc_deck_update_board",
                board_id=board_id,
                rename_stacks={"ideas": "Backlog"},
                rename_labels={"Web": "Website"},
                add_labels=["Web"],
            )
            assert [s["title"] for s in renamed["stacks"]] == ["Backlog", "Doing", "Done"]
            stored = api.call("GET", f"{API}/boards/{board_id}")
            assert {"Website", "Web"} <= {label["title"] for label in stored["labels"]}
            assert sorted(s["order"] for s in stored["stacks"]) == [0, 1, 2]  # kept their places
            said = await refused(
                client, "nc_deck_update_board", board_id=board_id, rename_labels={"Web": "press"}
            )
            assert "the board has a label 'press' already" in said
            archived = await call(client, "nc_deck_update_board", board_id=board_id, archived=True)
            assert archived["archived"] is True
            assert api.call("GET", f"{API}/boards/{board_id}")["archived"] is True
            said = await refused(client, "nc_deck_update_board", board_id=board_id, add_stacks=["Later"])
            assert "is archived; restore it (archived=false)" in said
