"""What the app bench asks of each toolset: one short flow per toolset (create, read, change,
delete), as a person would, with ids taken from earlier answers. Each step is one tool call; the
runner (measure.py) meters it. A flow makes its own objects, so every round starts alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["AS", "FLOWS", "Call", "Flow", "Setup"]

AS = "_as"  # an argument the runner takes out: the call's variant, measured apart ("2 stacks")

# call(tool, arguments) -> the tool's structured answer (the runner records the call)
Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
# what a flow needs of the bench around it: the feed's URL, mail's recipient, a notification made
Setup = dict[str, Any]
Flow = Callable[[Call, Setup, int], Awaitable[None]]


def _first(items: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    return next(i for i in items if all(i.get(k) == v for k, v in match.items()))


async def deck(call: Call, setup: Setup, n: int) -> None:
    board = await call(
        "nc_deck_create_board", {"title": f"Bench {n}", "stacks": ["To do", "Done"], AS: "2 stacks"}
    )
    other = await call(
        "nc_deck_create_board", {"title": f"Bench other {n}", "stacks": ["Inbox"], AS: "1 stack"}
    )
    await call("nc_deck_list_boards", {})
    detail = await call("nc_deck_get_board", {"board_id": board["id"]})
    todo, done = detail["stacks"][0]["id"], detail["stacks"][1]["id"]
    on = {"board_id": board["id"], "stack_id": todo}
    due = (datetime.now(UTC) + timedelta(days=2)).isoformat(timespec="seconds")
    card = await call("nc_deck_create_card", {**on, "title": "Write report", "due": due})
    await call("nc_deck_get_card", {**on, "card_id": card["id"]})
    await call(
        "nc_deck_update_card", {**on, "card_id": card["id"], "title": "Write the report", "done": True}
    )
    await call("nc_deck_add_comment", {"card_id": card["id"], "message": "Started"})
    await call("nc_deck_upcoming_cards", {})
    await call("nc_deck_move_card", {**on, "card_id": card["id"], "to_stack_id": done, AS: "on its board"})
    await call("nc_deck_update_board", {"board_id": board["id"], "title": f"Bench {n} renamed"})
    inbox = (await call("nc_deck_get_board", {"board_id": other["id"]}))["stacks"][0]["id"]
    moved = {"board_id": board["id"], "stack_id": done, "card_id": card["id"]}
    await call(
        "nc_deck_move_card",
        {**moved, "to_stack_id": inbox, "to_board_id": other["id"], AS: "to another board"},
    )
    await call("nc_deck_delete_card", {"board_id": other["id"], "stack_id": inbox, "card_id": card["id"]})
    await call("nc_deck_delete_board", {"board_id": other["id"]})


async def tables(call: Call, setup: Setup, n: int) -> None:
    columns = [{"title": "Place", "type": "text-line"}, {"title": "Nights", "type": "number"}]
    table = await call("nc_tables_create_table", {"title": f"Trips {n}", "columns": columns})
    await call(
        "nc_tables_add_column", {"table_id": table["id"], "column": {"title": "Notes", "type": "text-line"}}
    )
    await call("nc_tables_list_tables", {})
    await call("nc_tables_get_columns", {"table_id": table["id"]})
    await call("nc_tables_add_row", {"table_id": table["id"], "values": {"Place": "Oslo", "Nights": 2}})
    rows = await call("nc_tables_read_rows", {"table_id": table["id"]})
    row = rows["rows"][0]
    await call(
        "nc_tables_update_row", {"row_id": row["id"], "version": row["version"], "values": {"Nights": 3}}
    )
    await call("nc_tables_delete_row", {"row_id": row["id"]})


async def talk(call: Call, setup: Setup, n: int) -> None:
    made = await call("nc_talk_create_conversation", {"users": ["admin"], "name": f"Bench {n}"})
    token = made["token"]
    await call("nc_talk_list_conversations", {})
    posted = await call("nc_talk_post_message", {"token": token, "text": "Hello"})
    await call("nc_talk_read_messages", {"token": token})
    await call("nc_talk_react", {"token": token, "message_id": posted["message"]["id"], "emoji": "👍"})
    await call("nc_talk_list_mentionable", {"token": token})
    await call("nc_talk_list_participants", {"token": token})
    await call("nc_talk_mark_read", {"token": token})


async def collectives(call: Call, setup: Setup, n: int) -> None:
    made = await call("nc_collectives_create_collective", {"name": f"Bench wiki {n}"})
    cid = made["id"]
    await call("nc_collectives_list_collectives", {})
    pages = await call("nc_collectives_list_pages", {"collective_id": cid})
    landing = pages["pages"][0]["id"]
    page = await call(
        "nc_collectives_create_page",
        {
            "collective_id": cid,
            "title": "Plan",
            "parent_id": landing,
            "content": "# Plan\nsteps",
            AS: "with text",
        },
    )
    other = await call(
        "nc_collectives_create_page",
        {"collective_id": cid, "title": "Archive", "parent_id": landing, AS: "empty"},
    )
    read = await call("nc_collectives_get_page", {"collective_id": cid, "page_id": page["id"]})
    edit = {"collective_id": cid, "page_id": page["id"], "etag": read["etag"], "content": "# Plan\nmore"}
    await call("nc_collectives_edit_page", edit)
    await call("nc_collectives_search_pages", {"query": "plan", "collective_id": cid})
    await call(
        "nc_collectives_move_page", {"collective_id": cid, "page_id": page["id"], "parent_id": other["id"]}
    )
    await call("nc_collectives_trash_page", {"collective_id": cid, "page_id": page["id"]})
    await call("nc_collectives_restore_page", {"collective_id": cid, "page_id": page["id"]})


async def cookbook(call: Call, setup: Setup, n: int) -> None:
    recipe = await call(
        "nc_cookbook_create_recipe",
        {"name": f"Pancakes {n}", "ingredients": ["2 eggs", "200 g flour"], "instructions": ["Mix", "Fry"]},
    )
    await call("nc_cookbook_list_recipes", {})
    read = await call("nc_cookbook_get_recipe", {"recipe_id": recipe["id"]})
    await call(
        "nc_cookbook_update_recipe", {"recipe_id": recipe["id"], "version": read["version"], "servings": 4}
    )
    await call("nc_cookbook_delete_recipe", {"recipe_id": recipe["id"]})


async def bookmarks(call: Call, setup: Setup, n: int) -> None:
    added = await call(
        "nc_bookmarks_add_bookmark",
        {"url": f"https://example.com/bench/{n}", "title": "Bench", "tags": ["bench"]},
    )
    listed = await call("nc_bookmarks_list_bookmarks", {"tags": ["bench"]})
    await call("nc_bookmarks_list_folders", {})
    version = _first(listed["bookmarks"], id=added["id"])["version"]
    await call(
        "nc_bookmarks_update_bookmark", {"bookmark_id": added["id"], "version": version, "title": "Bench 2"}
    )
    await call("nc_bookmarks_delete_bookmark", {"bookmark_id": added["id"]})


async def news(call: Call, setup: Setup, n: int) -> None:
    feed = await call("nc_news_add_feed", {"url": f"{setup['feed_url']}?round={n}", "folder": "Bench"})
    await call("nc_news_list_feeds", {})
    items = await call("nc_news_list_items", {"feed_id": feed["id"], "unread_only": False})
    await call("nc_news_mark_items", {"item_ids": [items["items"][0]["id"]], "read": True})


async def forms(call: Call, setup: Setup, n: int) -> None:
    questions = [
        {"text": "Name?", "type": "short"},
        {"text": "Lunch?", "type": "multiple_unique", "options": ["Pizza", "Soup"]},
    ]
    form = await call("nc_forms_create_form", {"title": f"Lunch {n}", "questions": questions})
    await call("nc_forms_list_forms", {})
    detail = await call("nc_forms_get_form", {"form_id": form["id"]})
    name, lunch = detail["questions"][0], detail["questions"][1]
    answers = {str(name["id"]): "Alice", str(lunch["id"]): lunch["options"][0]}
    await call("nc_forms_submit", {"form_id": form["id"], "answers": answers})
    await call("nc_forms_list_submissions", {"form_id": form["id"]})


async def polls(call: Call, setup: Setup, n: int) -> None:
    poll = await call("nc_polls_create_poll", {"title": f"Lunch {n}", "options": ["Pizza", "Sushi"]})
    await call("nc_polls_list_polls", {})
    detail = await call("nc_polls_get_poll", {"poll_id": poll["id"]})
    option = detail["options"][0]["id"]
    await call("nc_polls_vote", {"poll_id": poll["id"], "option_id": option, "answer": "yes"})
    await call("nc_polls_delete_poll", {"poll_id": poll["id"]})


async def mail(call: Call, setup: Setup, n: int) -> None:
    boxes = await call("nc_mail_list_mailboxes", {})
    inbox = _first(boxes["accounts"][0]["mailboxes"], role="inbox")["id"]
    listed = await call("nc_mail_list_messages", {"mailbox_id": inbox, AS: "newest"})
    await call("nc_mail_list_messages", {"mailbox_id": inbox, "text": "lunch", AS: "search"})
    await call("nc_mail_read_message", {"message_id": listed["messages"][0]["id"]})
    letter = {"to": ["bob@example.com"], "subject": f"Bench {n}", "body": "Hello"}
    await call("nc_mail_create_draft", letter)
    await call("nc_mail_send", letter)


async def shipped(call: Call, setup: Setup, n: int) -> None:
    """What Nextcloud 34 ships enabled: activity, notifications, user status, file reminders."""
    await call("nc_status_get", {})
    await call("nc_status_set", {"status": "away", "message": f"Lunch {n}"})
    due = (datetime.now(UTC) + timedelta(days=1)).isoformat(timespec="seconds")
    await call("nc_reminders_set", {"path": "/bench-reminder.txt", "due": due})
    await call("nc_reminders_get", {"path": "/bench-reminder.txt"})
    if setup["major"] < 34:
        return  # Activity and Notifications come with Nextcloud 34's release archive, not the kit's 29
    await call("nc_activity_list", {})
    listed = await call("nc_notifications_list", {})
    await call("nc_notifications_dismiss", {"notification_id": listed["notifications"][0]["id"]})


FLOWS: dict[str, Flow] = {
    "deck": deck,
    "tables": tables,
    "talk": talk,
    "collectives": collectives,
    "cookbook": cookbook,
    "bookmarks": bookmarks,
    "news": news,
    "forms": forms,
    "polls": polls,
    "mail": mail,
    "shipped": shipped,
}
