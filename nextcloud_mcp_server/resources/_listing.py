"""`resources/list`: the caller's concrete resources, a bounded list read in pages.

What is listed: today and this week of the calendar (they cost nothing to list), then the most
recently changed notes, at most `MAX_NOTES`. Files and contacts are reached through their
templates: a listing of every file or card would be unbounded, and a client cannot page through
it sensibly. The cursor is opaque to clients: an offset into that list, checked when it comes
back."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from datetime import datetime
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import Annotations, Resource

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.auth.errors import GrantMissing
from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, NOTES_READ, missing_scopes
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.resources._uris import BadUri, calendar_uri, note_uri, week_of
from nextcloud_mcp_server.storage.errors import GrantUnreadable
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.calendar.tools_common import time_zone
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = ["MAX_NOTES", "PAGE_SIZE", "listed_page"]

logger = logging.getLogger(__name__)

PAGE_SIZE = 20
MAX_NOTES = 100  # the most recently changed notes; the others are read through the template
MAX_CURSOR_CHARS = 100


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode().rstrip("=")


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset = decoded["offset"]
        if not isinstance(offset, int) or isinstance(offset, bool) or not 0 < offset <= MAX_NOTES + 2:
            raise ValueError
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise BadUri("this cursor was not given out by this server; list again from the start") from None
    return offset


def _allowed(ctx: Context[Any, Any], scope: str) -> bool:
    caller = caller_of(ctx)
    return caller is None or not missing_scopes([scope], caller.scopes)


def _days(ctx: Context[Any, Any]) -> list[Resource]:
    today = datetime.now(time_zone(ctx, None)).date()
    day, week = today.isoformat(), week_of(today)
    return [
        Resource(
            uri=calendar_uri(day),
            name=f"calendar {day}",
            title=f"Today ({day})",
            description="Today's events in all your calendars",
            mime_type="application/json",
        ),
        Resource(
            uri=calendar_uri(week),
            name=f"calendar {week}",
            title=f"This week ({week})",
            description="This week's events (Monday to Sunday) in all your calendars",
            mime_type="application/json",
        ),
    ]


async def _recent_notes(ctx: Context[Any, Any]) -> list[Resource]:
    """The most recently changed notes, at most MAX_NOTES (from the notes folder, ADR 0049).

    None when the notes cannot be listed: a caller who has not connected their Nextcloud yet
    (offline-access mode) is not asked to here, since clients list on their own and reading a
    note asks; and a Notes app that is missing or refuses (Nextcloud 29's Notes API takes no
    bearer token) leaves the rest of the listing usable."""
    try:
        notes = await (await nextcloud_for(ctx)).api(NotesClient).newest()
        # of one second, the later made (the higher id) first
        newest = sorted(notes, key=lambda n: (n.modified, n.id), reverse=True)[:MAX_NOTES]
    except (GrantMissing, GrantUnreadable):
        return []
    except NextcloudError as exc:
        logger.info("notes left out of a resource listing: %s", exc.message)
        return []
    return [
        Resource(
            uri=note_uri(note.id),
            name=note.title or f"note {note.id}",
            title=note.title or f"Note {note.id}",
            description=f"Note in {note.category}" if note.category else "Note",
            mime_type="text/markdown",
            annotations=Annotations(
                last_modified=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(note.modified))
            ),
        )
        for note in newest
    ]


async def listed_page(
    ctx: Context[Any, Any], cursor: str | None, toolsets: frozenset[str] | None = None
) -> tuple[list[Resource], str | None]:
    """One page of the caller's resources, and the cursor of the next (None at the end); only
    those of the chosen `toolsets` (None: all)."""
    offset = _offset(cursor)
    found: list[Resource] = []
    if _allowed(ctx, CALENDAR_READ) and (toolsets is None or "calendar" in toolsets):
        found += _days(ctx)
    if _allowed(ctx, NOTES_READ) and (toolsets is None or "notes" in toolsets):
        found += await _recent_notes(ctx)
    page = found[offset : offset + PAGE_SIZE]
    more = offset + PAGE_SIZE < len(found)
    return page, _cursor(offset + PAGE_SIZE) if more else None
