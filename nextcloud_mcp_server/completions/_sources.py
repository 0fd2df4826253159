"""Where the values of each completable argument come from: one table, keyed by argument name.

A source asks Nextcloud once for the candidates of one selection (all calendars; the entries of
one folder) and the engine filters them by what was typed, so the next keystroke is answered from
the brief cache. Every source is bounded: it keeps at most `MAX_CANDIDATES` values and reads at
most `MAX_SCANNED` items from Nextcloud, and it never walks further than one folder level.

To complete another argument, add a line to `SOURCES`; a template or prompt that names its
argument the same way gets the values without further work.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, CONTACTS_READ, FILES_READ, NOTES_READ
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.names import HIDDEN
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["MAX_CANDIDATES", "MAX_SCANNED", "MAX_TYPED", "SOURCES", "Found", "Source"]

MAX_CANDIDATES = 500  # values one selection may hold (a folder of more completes from its first ones)
MAX_SCANNED = 5000  # items read from Nextcloud for one selection (notes scanned for categories)
MAX_TYPED = 1024  # characters of a typed value; anything longer is completed with nothing
MAX_VALUE = 256  # characters of one offered value (a name, a category, an id)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

T = TypeVar("T")


@dataclass(frozen=True)
class Found:
    """The candidates of one selection; `cut` when Nextcloud had more than were kept."""

    values: tuple[str, ...]
    cut: bool = False


async def _first(items: AsyncIterator[T], limit: int) -> tuple[list[T], bool]:
    """Up to `limit` items of a stream, and whether there were more; the stream (a response
    from Nextcloud being read) is closed at once when cut."""
    kept: list[T] = []
    try:
        async for item in items:
            if len(kept) == limit:
                return kept, True
            kept.append(item)
        return kept, False
    finally:
        close = getattr(items, "aclose", None)
        if close is not None:
            await close()


def offerable(value: str) -> bool:
    """A value worth offering: not empty, not too long, nothing hidden in it (a name with U+202E
    would read as another one), no control characters; the tools refuse such names too."""
    return 0 < len(value) <= MAX_VALUE and not HIDDEN.search(value) and not _CONTROL.search(value)


def _kept(values: Iterable[str], cut: bool = False) -> Found:
    unique = list(dict.fromkeys(v for v in values if offerable(v)))
    return Found(tuple(unique[:MAX_CANDIDATES]), cut or len(unique) > MAX_CANDIDATES)


class Source:
    """Candidates for one argument: behind `scope`, selected by the whole typed value (one
    selection) unless a subclass says otherwise."""

    scope: str = ""
    toolset: str = ""  # completed only where this toolset is chosen (NEXTCLOUD_MCP_TOOLSETS)

    def selection(self, typed: str) -> str | None:
        """Which candidates to fetch for `typed` ('' for all of them), or None for none at all."""
        return ""

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        raise NotImplementedError

    def matching(self, typed: str, found: Found) -> list[str]:
        wanted = typed.casefold()
        return [value for value in found.values if value.casefold().startswith(wanted)]


class CalendarIds(Source):
    scope = CALENDAR_READ
    toolset = "calendar"

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        return _kept(calendar.id for calendar in await nc.caldav.calendars())


class AddressBookIds(Source):
    scope = CONTACTS_READ
    toolset = "contacts"

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        return _kept(book.id for book in await nc.carddav.address_books())


class NoteCategories(Source):
    """The categories the user's notes are in, read from a listing without the notes' text."""

    scope = NOTES_READ
    toolset = "notes"

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        listing = nc.api(NotesClient).iter_notes(
            exclude=("content", "title", "favorite", "readonly", "modified")
        )
        notes, cut = await _first(listing, MAX_SCANNED)
        return _kept(_by_name(list({note.category for note in notes})), cut)


class NoteIds(Source):
    """The ids of the user's notes, most recently changed first (a client shows them as typed;
    the `nextcloud://notes/{id}` template needs the id)."""

    scope = NOTES_READ
    toolset = "notes"

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        listing = nc.api(NotesClient).iter_notes(
            exclude=("content", "title", "category", "favorite", "readonly")
        )
        notes, cut = await _first(listing, MAX_SCANNED)
        newest = sorted(notes, key=lambda note: (-note.modified, note.id))
        return _kept((str(note.id) for note in newest), cut)


class FilePaths(Source):
    """Entries of the folder that the typed path is in: one PROPFIND of depth 1, folders first
    (with a trailing '/', so the next completion goes one level down), then files. A path that
    could leave the user's files ('..', a URL, control characters) completes with nothing."""

    scope = FILES_READ
    toolset = "files"

    def selection(self, typed: str) -> str | None:
        folder, _, name = typed.lstrip("/").rpartition("/")
        if name.strip() in (".", ".."):
            return None  # the start of no name a listing could offer
        try:
            return paths.clean(folder)
        except paths.InvalidPath:
            return None

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        """The names in the folder (not whole paths: what is cached stays small)."""
        files = await nc.files()
        entries, cut = await _first(files.iter_directory(selection), MAX_CANDIDATES)
        folders = _by_name([entry.name + "/" for entry in entries if entry.kind == "directory"])
        others = _by_name([entry.name for entry in entries if entry.kind != "directory"])
        return _kept(folders + others, cut)

    def matching(self, typed: str, found: Found) -> list[str]:
        folder = self.selection(typed) or ""
        lead = "/" if typed.startswith("/") else ""
        base = f"{lead}{folder}/" if folder else lead
        start = typed.rpartition("/")[2].casefold()
        return [base + name for name in found.values if name.casefold().startswith(start)]


class UpcomingDates(Source):
    """Days from yesterday to two weeks ahead (`2026-11-26`), then the ISO weeks they fall in
    (`2026-W48`), for a calendar day or week: nothing is asked of Nextcloud, but the caller still
    needs to be able to read calendars. Yesterday is there for a user whose day is not yet the
    server's."""

    scope = CALENDAR_READ
    toolset = "calendar"
    DAYS = 15

    def __init__(self, today: Callable[[], date] = lambda: datetime.now().astimezone().date()) -> None:
        self._today = today

    async def fetch(self, nc: NextcloudClient, selection: str) -> Found:
        first = self._today() - timedelta(days=1)
        days = [first + timedelta(days=n) for n in range(self.DAYS)]
        weeks = [f"{year:04d}-W{week:02d}" for year, week, _ in (day.isocalendar() for day in days)]
        return _kept([day.isoformat() for day in days] + weeks)


def _by_name(values: list[str]) -> list[str]:
    return sorted(values, key=lambda value: (value.casefold(), value))


# Argument name -> where its values come from. Tools' and templates' names for the same thing
# share a source (`calendar` in the tools, `calendar_id` elsewhere).
SOURCES: dict[str, Source] = {
    "calendar": CalendarIds(),
    "calendar_id": CalendarIds(),
    "category": NoteCategories(),
    "id": NoteIds(),  # only nextcloud://notes/{id} names an argument `id`
    "path": FilePaths(),
    "address_book": AddressBookIds(),
    "addressbook": AddressBookIds(),
    "date": UpcomingDates(),
}
