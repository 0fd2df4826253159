"""What the previews of the app records' and messages' questions are shown against (Cookbook,
Bookmarks, Polls, Mail, Notifications, user status, a Deck card's change), each family with one
hostile value a person must see as text: markup, a right-to-left override, a huge body."""

from __future__ import annotations

from typing import Any

from mcp import ClientSession

from tests.backends import Nextcloud
from tests.mcp_clients import structured
from tests.security.test_publishing import DECK, ocs
from tests.toolsets.mail.test_mail import _mail_api

OVERRIDE = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "\u202egnp.exe" is drawn as "exe.png"
MARKUP = '<img src=x onerror="parent.hacked=1">'
OCS = "/ocs/v2.php/apps"
RECIPE_TEXT = f"Pour the batter{OVERRIDE}gnp.exe and bake until golden. " * 4
BIG_BODY = f"Hi Bob,\n<b>see below</b> {OVERRIDE}fdp.exe\n" + "x" * 30_000 + "\nSigned: the real end"
CARD_TEXT = "Q1 numbers, Q2 numbers, the travel budget and the hiring plan for next year."

CASES: dict[str, str] = {
    "nc_deck_update_card": "Change the card 'Budget'?",
    "nc_deck_move_card": "Move the card 'Budget' to the board 'Open plans'?",
    # {old_title}: as Collectives kept it (it may adjust a title, which becomes a file name)
    "nc_collectives_trash_page": "Move the page '{old_title}' and its 1 subpage to the trash?",
    "nc_cookbook_delete_recipe": "Delete the recipe 'Pancakes'?",
    "nc_cookbook_update_recipe": "Change the recipe 'Pancakes'?",
    "nc_bookmarks_delete_bookmark": f"Delete the bookmark '{MARKUP}'?",
    "nc_polls_delete_poll": f"Delete the poll '{MARKUP} Lunch' with 1 vote?",
    "nc_mail_send": "Send the email 'Lunch' to bob@example.com and 1 other?",
    "nc_notifications_dismiss": "Dismiss all 2 of your notifications?",
    "nc_status_set": "Show the status message '\U0001f6e0 In a <b>workshop</b>' to others?",
    "nc_calendar_delete_calendar": "Delete the calendar 'Trips'?",
    "nc_contacts_delete_address_book": "Delete the address book 'Contacts'?",
    "nc_deck_delete_stack": "Delete the stack 'To do' with 1 card?",
    "nc_deck_delete_label": "Delete the label 'Later' of the board 'Plans'?",
}


def _ocs(nc: Nextcloud, method: str, path: str, *, admin: bool = False, **body: Any) -> Any:
    with nc.http(nc.admin if admin else nc.alice) as http:
        answer = http.request(method, f"{OCS}/{path}", params={"format": "json"}, json=body or None)
    answer.raise_for_status()
    return answer.json()["ocs"]["data"] if answer.content else None


def seed_apps(nc: Nextcloud, account: dict[str, Any]) -> dict[str, Any]:
    """What Nextcloud's side holds: a mail account, two notifications (one in markup), a second
    board shared with a group the first is not (a card moved there is read by more people)."""
    _mail_api(nc, "POST", "accounts", **account)
    nc.make_calendar("trips", "Trips", nc.alice)
    board = ocs(nc, nc.alice, "POST", f"{DECK}/boards", json={"title": "Open plans", "color": "0082c9"})["id"]
    stack = ocs(nc, nc.alice, "POST", f"{DECK}/boards/{board}/stacks", json={"title": "Inbox", "order": 1})[
        "id"
    ]
    nc.add_group("staff", "admin")
    acl = {"type": 1, "participant": "staff", "permissionEdit": True, "permissionShare": False}
    ocs(nc, nc.alice, "POST", f"{DECK}/boards/{board}/acl", json={**acl, "permissionManage": False})
    _ocs(nc, "DELETE", "notifications/api/v2/notifications")  # the kit's "new app password"
    for subject in ("Backup finished", "<script>parent.hacked=1</script> Disk almost full"):
        _ocs(nc, "POST", "notifications/api/v2/admin_notifications/alice", admin=True, shortMessage=subject)
    return {"board2": board, "stack2": stack}


async def add_records(session: ClientSession, collective: int) -> dict[str, Any]:
    """A recipe, a bookmark, a poll with a vote, a page with a subpage in the collective, added as
    a client would; their ids and versions."""

    async def call(tool: str, **arguments: Any) -> dict[str, Any]:
        return structured(await session.call_tool(tool, arguments))

    recipe = await call(
        "nc_cookbook_create_recipe",
        name="Pancakes",
        description=RECIPE_TEXT,
        ingredients=["2 eggs", "200 g flour"],
        instructions=["Mix", "Bake"],
        category="Breakfast",
    )
    bookmark = await call(
        "nc_bookmarks_add_bookmark",
        url="https://example.org/recipes",
        title=MARKUP,
        description=f"Recipes{OVERRIDE}gnp.exe",
        tags=["food"],
    )
    poll = await call("nc_polls_create_poll", title=f"{MARKUP} Lunch", options=["Pizza", "Soup"])
    await call("nc_polls_vote", poll_id=poll["id"], option_id=poll["options"][0]["id"], answer="yes")
    old = await call("nc_collectives_create_page", collective_id=collective, title=f"{MARKUP} Old notes")
    await call("nc_collectives_create_page", collective_id=collective, title="Older", parent_id=old["id"])
    return {
        "old_page": old["id"],
        "old_title": old["title"],
        "recipe": recipe["id"],
        "recipe_version": recipe["version"],
        "bookmark": bookmark["id"],
        "poll": poll["id"],
    }


def arguments(tool: str, s: dict[str, Any]) -> dict[str, Any]:
    """The arguments of each question (each asks: a shrinking text, a delete, a publication)."""
    return {
        "nc_deck_update_card": {
            "board_id": s["board"],
            "stack_id": s["stack"],
            "card_id": s["card"],
            "description": "<b>cut</b>",
            "title": "Budget 2027",
            "done": True,
        },
        "nc_deck_move_card": {
            "board_id": s["board"],
            "stack_id": s["stack"],
            "card_id": s["card"],
            "to_board_id": s["board2"],
            "to_stack_id": s["stack2"],
        },
        "nc_collectives_trash_page": {"collective_id": s["collective"], "page_id": s["old_page"]},
        "nc_cookbook_delete_recipe": {"recipe_id": s["recipe"]},
        "nc_cookbook_update_recipe": {
            "recipe_id": s["recipe"],
            "version": s["recipe_version"],
            "description": "<script>parent.hacked=1</script>",
            "servings": 4,
        },
        "nc_bookmarks_delete_bookmark": {"bookmark_id": s["bookmark"]},
        "nc_polls_delete_poll": {"poll_id": s["poll"]},
        "nc_mail_send": {
            "to": ["bob@example.com", " BOB@example.com"],
            "cc": ["carol@example.com"],
            "subject": " Lunch ",
            "body": BIG_BODY,
        },
        "nc_notifications_dismiss": {"all": True},
        "nc_status_set": {"status": "dnd", "message": "In a  <b>workshop</b>", "icon": "\U0001f6e0"},
        "nc_calendar_delete_calendar": {"calendar": "trips"},
        "nc_contacts_delete_address_book": {"address_book": "contacts"},
        "nc_deck_delete_stack": {"board_id": s["board"], "stack_id": s["stack"]},
        "nc_deck_delete_label": {"board_id": s["board"], "label": "later"},
    }[tool]


def check_texts(texts: dict[str, str]) -> None:
    """Each family's hostile value shown as text, hidden characters named, big bodies bounded with
    their end in sight; and what changes shown before and after."""
    card = texts["nc_deck_update_card"]
    assert CARD_TEXT in card, card
    assert "<b>cut</b>" in card, card
    assert "Budget 2027" in card, card
    assert "To do" in card, card
    move = texts["nc_deck_move_card"]
    assert "Plans \u203a To do" in move, move
    assert "Open plans \u203a Inbox" in move, move
    assert CARD_TEXT in move, move
    assert "Older" in texts["nc_collectives_trash_page"]
    recipe = texts["nc_cookbook_update_recipe"]
    assert "⟦U+202E⟧gnp.exe" in recipe, recipe
    assert OVERRIDE not in recipe, recipe
    assert "invisible or text-direction character" in recipe, recipe
    assert "<script>parent.hacked=1</script>" in recipe, recipe
    assert "Servings" in recipe, recipe
    assert "2 eggs" in texts["nc_cookbook_delete_recipe"]
    bookmark = texts["nc_bookmarks_delete_bookmark"]
    assert "https://example.org/recipes" in bookmark, bookmark
    assert "⟦U+202E⟧gnp.exe" in bookmark, bookmark
    assert "Pizza" in texts["nc_polls_delete_poll"]
    mail = texts["nc_mail_send"]
    assert "alice@example.com" in mail, mail
    assert "carol@example.com" in mail, mail
    assert "BOB@example.com" not in mail  # sent to once, as the server does
    assert "<b>see below</b> ⟦U+202E⟧fdp.exe" in mail, mail
    assert "Signed: the real end" in mail, mail  # the end of a long body is seen
    assert f"the email goes on ({len(BIG_BODY)} characters in all)" in mail, mail
    assert len(mail) < 25_000
    notices = texts["nc_notifications_dismiss"]
    assert "<script>parent.hacked=1</script> Disk almost full" in notices
    assert "Backup finished" in notices
    assert "Budget" in texts["nc_deck_delete_stack"]
    assert "trash bin" in texts["nc_calendar_delete_calendar"]
    assert "cannot be restored" in texts["nc_contacts_delete_address_book"]
    status = texts["nc_status_set"]
    assert "Do not disturb" in status, status
    assert "every user of this Nextcloud" in status, status
