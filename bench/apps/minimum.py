"""The fewest requests each app tool needs for its answer, from the app's own API, and why nothing
fewer gives the same answer. `read`: the tool only reads, so its floor is the same GETs sent
directly. A count is for the call as the bench makes it (scenario.py); discovery (who the user
is, which apps are enabled) is counted apart, once per process."""

from __future__ import annotations

__all__ = ["MINIMUM"]

# tool -> (requests, why, read)
MINIMUM: dict[str, tuple[int, str, bool]] = {
    # Deck: REST /index.php/apps/deck/api/v1.0, comments through OCS
    "nc_deck_list_boards": (1, "GET boards: every board with its title, owner and archived flag", True),
    "nc_deck_get_board": (
        2,
        "GET boards/{id} (labels, members; no cards) and GET boards/{id}/stacks (stacks with their cards)",
        True,
    ),
    "nc_deck_get_card": (
        2,
        "GET the card (labels, assignees) and GET its comments (OCS): neither answer has the other's",
        True,
    ),
    "nc_deck_create_card": (
        1,
        "POST the card with title, description and due date: the answer is the card",
        False,
    ),
    "nc_deck_update_card": (
        2,
        "Deck's PUT replaces the whole card (title, type, owner, order, due...): GET it, then PUT it",
        False,
    ),
    "nc_deck_add_comment": (
        2,
        "who reads it (the board's members: GET boards/{id}, the card's board named by Deck's card answer needs the card's stack... ) then POST the comment",
        False,
    ),
    "nc_deck_upcoming_cards": (
        1,
        "GET overview/upcoming: due cards across boards with board and stack",
        True,
    ),
    "nc_deck_move_card": (1, "PUT cards/{id}/reorder with the target stack and order", False),
    "nc_deck_update_board": (
        2,
        "Deck's PUT boards/{id} needs title, color and archived: GET the board, then PUT",
        False,
    ),
    "nc_deck_create_board": (
        3,
        "POST the board (answer: it with Deck's default labels), then one POST per stack (two here)",
        False,
    ),
    "nc_deck_delete_card": (1, "DELETE the card", False),
    "nc_deck_delete_board": (1, "DELETE the board", False),
}
