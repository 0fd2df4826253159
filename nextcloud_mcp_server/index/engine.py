"""The find index's one interface and what both engines share (docs/ADR/0071).

An index holds, per user key, items (a note, a file) with their text, and marks (the ETag a
folder had when everything below it was indexed). Every method takes the user key and touches
that user's rows only. `SQLiteIndex` (`sqlite.py`) and `PostgresIndex` (`postgres.py`) implement
it; both pass the same tests.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from nextcloud_mcp_server.index.query import Query

__all__ = [
    "END_MARK",
    "MAX_BODY_BYTES",
    "START_MARK",
    "EmbeddingError",
    "Filters",
    "FindIndex",
    "Hit",
    "IndexError_",
    "Item",
    "Status",
    "clean_text",
    "collection_of",
    "folder_bounds",
    "owner_tag",
]

MAX_BODY_BYTES = 256 * 1024
START_MARK, END_MARK = "\x02", "\x03"  # around a match in an excerpt; never in stored text
MAX_LIMIT = 50
MAX_OFFSET = 500

# C0 controls but tab and newline, DEL, C1 controls: never stored (NUL breaks PostgreSQL text,
# the markers must stay ours).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class IndexError_(Exception):  # named apart from Python's own IndexError
    """The index cannot be used (its file or database is unreachable or refused)."""


class EmbeddingError(Exception):
    """The model cannot turn text into vectors (said in words a person can act on)."""


def clean_text(text: str, max_bytes: int = MAX_BODY_BYTES) -> str:
    """`text` as the index keeps it: valid UTF-8 (lone surrogates replaced), no control
    characters but tab and newline, at most `max_bytes` bytes (cut at a character boundary)."""
    data = text.encode("utf-8", "replace")[:max_bytes]
    return _CONTROLS.sub(" ", data.decode("utf-8", "ignore"))


def owner_tag(user: str) -> str:
    """A word standing for `user` inside a full-text index (letters and digits only)."""
    return "u" + hashlib.sha256(b"nextcloud-mcp-find:" + user.encode("utf-8", "replace")).hexdigest()[:32]


@dataclass(frozen=True)
class Item:
    """One thing to find. `key` names it within its kind (a note's id, a file's path); `location`
    is where it is (a file's folder, a note's category); `version` its ETag."""

    kind: str
    key: str
    title: str
    location: str
    modified: float
    version: str
    body: str


def collection_of(href: str) -> str:
    """The collection (calendar, address book) an object's href is in, with its slash."""
    return href.rstrip("/").rpartition("/")[0] + "/"


@dataclass(frozen=True)
class Hit:
    kind: str
    key: str
    title: str
    location: str
    modified: float
    version: str
    excerpt: str  # matches between START_MARK and END_MARK


@dataclass(frozen=True)
class Filters:
    kinds: frozenset[str] | None = None
    folder: str | None = None  # items whose location is this folder or below it
    changed_after: float | None = None
    changed_before: float | None = None


def folder_bounds(folder: str) -> list[object]:
    """What both engines compare a location with for "`folder` or below it", by exact characters
    (`location = folder OR the first n characters of location = folder + "/"`): the folder, n,
    and the folder with its slash. SQLite's LIKE ignored ASCII case, so "work" also matched
    "Work/" and "WORK/"."""
    folder = folder.strip("/")
    return [folder, len(folder) + 1, folder + "/"]


@dataclass(frozen=True)
class Status:
    items: dict[str, int] = field(default_factory=dict)  # per kind
    folders: int = 0  # folders whose whole tree is indexed
    synced_at: float | None = None  # when a sync last ended
    complete: bool = False  # the last sync read everything (nothing left for the next)
    error: str = ""  # what the last sync could not do


class FindIndex(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def put(self, user: str, items: Sequence[Item]) -> None:
        """Add or replace items (by kind and key)."""

    async def remove(self, user: str, kind: str, keys: Collection[str]) -> int:
        """Remove items by key; how many there were."""

    async def remove_below(self, user: str, kind: str, folder: str) -> int:
        """Remove the items whose location is `folder` or below it."""

    async def versions(self, user: str, kind: str, location: str | None = None) -> dict[str, str]:
        """Key -> version of the user's items of `kind` (in `location` only, when given)."""

    async def marks(self, user: str, source: str) -> dict[str, str]:
        """Key -> version of the user's marks of `source` (a folder's ETag when indexed)."""

    async def set_marks(self, user: str, source: str, marks: dict[str, str | None]) -> None:
        """Set marks; a None version removes the mark."""

    async def search(
        self, user: str, query: Query, filters: Filters, *, limit: int, offset: int = 0
    ) -> list[Hit]:
        """The user's items matching `query`, best first."""

    async def status(self, user: str) -> Status: ...

    async def set_status(self, user: str, *, synced_at: float, complete: bool, error: str) -> None: ...

    async def forget(self, user: str) -> int:
        """Delete everything kept for `user` (items, marks, status); how many items there were."""

    def hold(self, user: str) -> AbstractAsyncContextManager[bool]:
        """Whether this process may sync `user` in the background now (True: held until the end;
        False: another round of theirs is under way, here or in another replica). Never waits."""


def bounded(limit: int, offset: int) -> tuple[int, int]:
    """A page's limit and offset within what an engine answers."""
    return max(1, min(limit, MAX_LIMIT)), max(0, min(offset, MAX_OFFSET))
