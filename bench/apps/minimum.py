"""The fewest requests each app tool needs for its answer, from the app's own API, and why nothing
fewer gives the same answer. Keys are tools, or "tool (variant)" where the bench measures two kinds
of call (scenario.py). `read`: the tool only reads, so its floor is the same GETs sent directly.

The house rules count: a destructive call the human approved reads its target again before acting
(what was approved must be what happens: docs/ADR on approvals), a post that reaches more people
reads who they are first, and a name the model gives (a column title, a stack of a board) is
checked against what the app says before anything is written. Discovery (who the user is, which
apps are enabled) is counted apart, once per process."""

from __future__ import annotations

__all__ = ["MINIMUM"]

R, W = True, False
_DECK_PLACE = "the board (Deck answers a card by its id whatever board and stack the path names: ADR 0043)"

# tool -> (requests, why, read)
MINIMUM: dict[str, tuple[int, str, bool]] = {
    # Deck: REST /index.php/apps/deck/api/v1.0; comments and upcoming cards through OCS
    "nc_deck_list_boards": (1, "GET boards: each board's title, owner and archived flag", R),
    "nc_deck_get_board": (2, "GET boards/{id} (labels, members) + GET its stacks (with their cards)", R),
    "nc_deck_get_card": (3, f"{_DECK_PLACE} + the card + its comments (OCS; the card has only a count)", R),
    "nc_deck_create_card": (2, f"{_DECK_PLACE} + POST the card (its answer is the card)", W),
    "nc_deck_update_card": (
        3,
        f"{_DECK_PLACE} + the card (Deck's PUT replaces every field) + PUT (answers the card); labels "
        "and users are a request each, then a read (their answers do not carry the card; not asked here)",
        W,
    ),
    "nc_deck_add_comment": (
        4,
        "the card by id alone (its stack), the stack (its board), the board (who reads the comment: "
        "its members) + POST",
        W,
    ),
    "nc_deck_upcoming_cards": (1, "GET overview/upcoming (OCS): due cards across boards", R),
    "nc_deck_move_card (on its board)": (
        3,
        f"{_DECK_PLACE} + the card + PUT reorder (answers the stack's cards); Deck 1.13 keeps the card's "
        "rank among the others, so where that is not the rank asked one card update more (not asked here)",
        W,
    ),
    "nc_deck_move_card (to another board)": (
        5,
        f"{_DECK_PLACE} + the card + the target board (its stack) + PUT the card there + PUT reorder "
        "(answers the stack's cards); labels are a request each",
        W,
    ),
    "nc_deck_update_board": (
        2,
        "GET the board (its PUT needs title, color, archived; it lists its stacks and labels, the "
        "answer lists them) + PUT (answers the board); a request per stack or label added or renamed",
        W,
    ),
    "nc_deck_create_board (2 stacks)": (
        3,
        "POST the board (answers it with its labels) + a POST per stack",
        W,
    ),
    "nc_deck_create_board (1 stack)": (2, "POST the board + a POST per stack", W),
    "nc_deck_delete_card": (4, f"{_DECK_PLACE} + the card; again after the approval + DELETE", W),
    "nc_deck_delete_board": (
        5,
        "the board and its stacks (cards counted in the question); both again after the approval + DELETE",
        W,
    ),
    # Tables: REST /index.php/apps/tables/api/1
    "nc_tables_create_table": (3, "POST the table + a POST per column (the API takes no columns with it)", W),
    "nc_tables_add_column": (2, "GET the columns (a title already taken is refused) + POST", W),
    "nc_tables_list_tables": (1, "GET tables (views and row counts included)", R),
    "nc_tables_get_columns": (1, "GET the columns", R),
    "nc_tables_add_row": (
        1,
        "POST the row, by column ids: the titles the model names were read in the last 30 s "
        "(nc_tables_get_columns, kept_columns); 2 when they were not",
        W,
    ),
    "nc_tables_read_rows": (2, "GET the columns (titles, types) + GET the rows", R),
    "nc_tables_update_row": (
        4,
        "GET the row (its version, its table) + the columns + PUT + GET the row: Tables' PUT answers "
        "the row with its old lastEditAt, so the new version needs a read",
        W,
    ),
    "nc_tables_delete_row": (
        5,
        "the row + its table (title) + columns (the question names the cells); the row again after "
        "the approval + DELETE",
        W,
    ),
    # Talk: OCS /ocs/v2.php/apps/spreed
    "nc_talk_create_conversation": (
        2,
        "POST the room + POST each participant (Talk creates with one invite)",
        W,
    ),
    "nc_talk_list_conversations": (1, "GET room", R),
    "nc_talk_post_message": (
        4,
        "the room (may the user post; its kind) + participants + bots (who reads it: ADR 0058) + POST",
        W,
    ),
    "nc_talk_read_messages": (1, "GET chat/{token}", R),
    "nc_talk_react": (1, "POST reaction (answers the message's reactions)", W),
    "nc_talk_list_mentionable": (1, "GET chat/{token}/mentions", R),
    "nc_talk_list_participants": (1, "GET room/{token}/participants", R),
    "nc_talk_mark_read": (1, "POST chat/{token}/read (answers the room)", W),
    # Collectives (Nextcloud 30 on): OCS api/v1.0, page text through WebDAV
    "nc_collectives_create_collective": (
        2,
        "POST + GET its pages (the answer does not name the landing page)",
        W,
    ),
    "nc_collectives_list_collectives": (1, "GET collectives", R),
    "nc_collectives_list_pages": (1, "GET pages", R),
    "nc_collectives_create_page (with text)": (
        2,
        "POST the page (an empty file) + PUT its text (WebDAV, answers the etag)",
        W,
    ),
    "nc_collectives_create_page (empty)": (
        2,
        "POST the page + read its file's etag (the OCS answer has none)",
        W,
    ),
    "nc_collectives_get_page": (2, "GET the page (its file) + GET the file's text (WebDAV)", R),
    "nc_collectives_edit_page": (
        2,
        "GET the page (its file) + PUT with If-Match: the etag the model read (a stale one is refused)",
        W,
    ),
    "nc_collectives_search_pages": (
        4,
        "GET pages + each page's text (3 here): Collectives' own search is empty until a background "
        "job indexes",
        R,
    ),
    "nc_collectives_move_page": (
        2,
        "GET pages (the parent is in the collective, not under the page) + PUT",
        W,
    ),
    "nc_collectives_trash_page": (
        3,
        "GET pages (subpages, for the question); again after the approval + DELETE",
        W,
    ),
    "nc_collectives_restore_page": (2, "GET the trash (the page, its subpages) + PATCH", W),
    # Cookbook: REST /index.php/apps/cookbook/api/v1
    "nc_cookbook_create_recipe": (
        2,
        "POST (answers only the id) + GET (its version: the modification time)",
        W,
    ),
    "nc_cookbook_list_recipes": (1, "GET recipes", R),
    "nc_cookbook_get_recipe": (1, "GET recipes/{id}", R),
    "nc_cookbook_update_recipe": (
        3,
        "GET (version check; the PUT replaces the whole recipe) + PUT (answers the id) + GET (new version)",
        W,
    ),
    "nc_cookbook_delete_recipe": (3, "GET (the question); again after the approval + DELETE", W),
    # Bookmarks: REST /index.php/apps/bookmarks/public/rest/v2
    "nc_bookmarks_add_bookmark": (
        2,
        "GET by url (Bookmarks merges a second POST of a link into the first) + POST",
        W,
    ),
    "nc_bookmarks_list_bookmarks": (1, "GET bookmark with the filters", R),
    "nc_bookmarks_list_folders": (2, "GET folder (the tree) + GET tag", R),
    "nc_bookmarks_update_bookmark": (2, "GET (version check; the PUT replaces the bookmark) + PUT", W),
    "nc_bookmarks_delete_bookmark": (3, "GET (the question); again after the approval + DELETE", W),
    # News: REST /index.php/apps/news/api/v1-3
    "nc_news_add_feed": (3, "GET folders + POST the folder (it was missing) + POST the feed", W),
    "nc_news_list_feeds": (2, "GET folders (names) + GET feeds", R),
    "nc_news_list_items": (1, "GET items", R),
    "nc_news_mark_items": (1, "POST items/read/multiple", W),
    # Forms: OCS api/v3
    "nc_forms_create_form": (
        5,
        "POST the form + PATCH its title (the POST takes none) + a POST per question + one POST of a "
        "question's options",
        W,
    ),
    "nc_forms_list_forms": (1, "GET forms", R),
    "nc_forms_get_form": (1, "GET forms/{id} (questions and options included)", R),
    "nc_forms_submit": (2, "GET the form (choices named by text, types) + POST the submission", W),
    "nc_forms_list_submissions": (1, "GET submissions (answers the form's questions with them)", R),
    # Polls: OCS api/v1.0 (9.x) or REST (7.x)
    "nc_polls_list_polls": (1, "GET polls", R),
    "nc_polls_get_poll": (3, "GET the poll + its options (with counts) + its votes", R),
    "nc_polls_create_poll": (
        3,
        "POST the poll + a POST per option (each answers the option); Polls' dialect comes from the "
        "capabilities the apps check was told (ADR 0094)",
        W,
    ),
    "nc_polls_vote": (5, "GET the options (is it this poll's) + PUT the vote + the poll, options, votes", W),
    "nc_polls_delete_poll": (7, "poll, options, votes (the question); again after the approval + DELETE", W),
    # Mail (Nextcloud 30 on): /index.php/apps/mail/api
    "nc_mail_list_mailboxes": (2, "GET accounts + GET mailboxes of the one account", R),
    "nc_mail_list_messages (newest)": (
        3,
        "POST sync (new mail) + GET messages: 2; 3 the first time a mailbox is ever listed, where "
        "Mail answers the sync 428 and wants it again with init (a full sync). Asking init every "
        "time would sync the whole mailbox on each call, and Mail keeps no sign of a first sync",
        R,
    ),
    "nc_mail_list_messages (search)": (2, "POST sync + GET messages with the filter", R),
    "nc_mail_read_message": (2, "GET the message + its source (the plain text)", R),
    "nc_mail_create_draft": (2, "GET accounts (the default one) + POST drafts", W),
    "nc_mail_send": (
        4,
        "GET accounts + POST to the outbox + GET it back (sent only if it is exactly what the human "
        "approved) + POST send",
        W,
    ),
    # What Nextcloud ships: OCS
    "nc_activity_list": (1, "GET activity/all", R),
    "nc_notifications_list": (1, "GET notifications", R),
    "nc_notifications_dismiss": (1, "DELETE notifications/{id}", W),
    "nc_status_get": (1, "GET user_status", R),
    "nc_status_set": (2, "PUT the message + PUT the status (each answers the whole status)", W),
    "nc_reminders_get": (2, "PROPFIND (the file's id) + GET the reminder", R),
    "nc_reminders_set": (2, "PROPFIND (the file's id) + PUT the reminder", W),
}
