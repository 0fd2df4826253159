"""Prompts people use as slash commands (docs/ADR/0077): "what's on today", "find time for a
meeting", "tidy my Deck board". Each is a user message that names the tools to use and what to
leave to the person; it reads nothing itself and changes nothing. A prompt is offered only when
the toolset whose tools it names is chosen; with none, the server advertises no `prompts`
(docs/ADR/0067).

Arguments are strings (MCP prompts take no other type) and are bounded and checked here: a time
zone must be one the server knows, a number a small whole number, a board name one line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from nextcloud_mcp_server.numbers import ascii_number

__all__ = ["PROMPTS", "register_prompts"]

MAX_ARGUMENT = 100  # characters of any argument


def _refuse(message: str) -> MCPError:
    """An argument refused, with its reason for the person (a plain exception would reach the
    client only as "Error rendering prompt")."""
    return MCPError(code=INVALID_PARAMS, message=message)


def _zone(timezone: str | None) -> str | None:
    name = (timezone or "").strip()
    if not name:
        return None
    if len(name) > MAX_ARGUMENT:
        raise _refuse("timezone: at most 100 characters")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones ("America")
        raise _refuse(f"timezone: {name!r} is not an IANA time zone such as Europe/Berlin") from None
    return name


def _whole(value: str | None, name: str, default: int, low: int, high: int) -> int:
    text = (value or "").strip()
    if not text:
        return default
    number = ascii_number(text)
    if number is None or not low <= number <= high:
        raise _refuse(f"{name}: a whole number from {low} to {high}")
    return number


def _when(zone: str | None) -> str:
    if zone is None:
        return "today in my time zone (ask me for it if you do not know it, and pass it as timezone)"
    today = dt.datetime.now(ZoneInfo(zone)).date()
    return f"today, {today.isoformat()} in {zone} (pass timezone {zone})"


def today(timezone: str | None = None) -> str:
    """What is on today: the day's events and the tasks due, in one short overview."""
    zone = _zone(timezone)
    return (
        f"What is on {_when(zone)}? List my events of the day with nc_calendar_list_events "
        "(from the start of the day to the start of the next) and my open tasks due today or "
        "earlier with nc_calendar_list_todos. Answer with a short overview: the events in order "
        "with their times and places, then the tasks, overdue ones first. Change nothing."
    )


def find_time(
    duration_minutes: str | None = None, within_days: str | None = None, timezone: str | None = None
) -> str:
    """Find free time for a meeting in the next days, and offer the best slots."""
    minutes = _whole(duration_minutes, "duration_minutes", 60, 5, 1440)
    days = _whole(within_days, "within_days", 7, 1, 60)
    zone = _zone(timezone)
    return (
        f"Find free time for a {minutes}-minute meeting within the next {days} days, starting "
        f"{_when(zone)}. Use nc_calendar_find_availability with duration_minutes {minutes}; "
        "offer me the three best slots (earlier and within working hours first) with the busy "
        "events around them. Create no event until I pick one."
    )


def tidy_deck_board(board: str) -> str:
    """Tidy a Deck board: what is overdue, stale, unlabeled or finished, and a plan to fix it."""
    name = " ".join((board or "").split())
    if not name:
        raise _refuse("board: the board's title or id")
    if len(name) > MAX_ARGUMENT:
        raise _refuse("board: at most 100 characters")
    return (
        f"Help me tidy my Deck board {name!r}. Find it with nc_deck_list_boards and read it with "
        "nc_deck_get_board. Tell me which cards are overdue, which have no due date or no label, "
        "which look finished but sit in an open list, and which seem to be duplicates. Then "
        "propose changes (move, label, set a due date) as a short list and make them only after "
        "I say yes; delete nothing unless I ask for it by name."
    )


# name -> (title, the toolset whose tools it names, the function)
PROMPTS: dict[str, tuple[str, str, Callable[..., str]]] = {
    "today": ("What's on today", "calendar", today),
    "find_time": ("Find time for a meeting", "calendar", find_time),
    "tidy_deck_board": ("Tidy my Deck board", "deck", tidy_deck_board),
}


def register_prompts(server: MCPServer[Any], toolsets: Iterable[str]) -> None:
    """Add the prompts whose toolset is chosen."""
    chosen = set(toolsets)
    for name, (title, toolset, fn) in PROMPTS.items():
        if toolset in chosen:
            description = (fn.__doc__ or title).strip()
            server.add_prompt(Prompt.from_function(fn, name=name, title=title, description=description))
