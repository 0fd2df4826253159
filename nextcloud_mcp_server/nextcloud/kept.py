"""Answers kept with the validator Nextcloud gave them, so an unchanged listing costs one cheap
question instead of a full read.

A kept answer is never served on its own word: the caller first asks Nextcloud, **with the
caller's own credential**, whether the validator still holds (a conditional GET answered 304, a
depth-0 PROPFIND of a folder's ETag or a calendar's sync token). Only when Nextcloud confirms it is
the kept value used. So a credential that Nextcloud refuses never sees a kept answer, and an
answer kept for one user is looked up only under that user's key.

Bounded by entries and by the total size of what is kept (sizes are the callers' estimate, in
bytes of the answer Nextcloud sent); the least recently used go first. An answer bigger than a
quarter of the budget is not kept.

    kept = answers.get(user, "notes:list")
    if kept is not None and await still_valid(kept.validator):
        return kept.value
    value, validator, size = await read_everything()
    answers.put(user, "notes:list", validator, value, size)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nextcloud_mcp_server.nextcloud.flights import Flights

__all__ = ["KeptAnswer", "KeptAnswers"]

DEFAULT_MAX_ENTRIES = 512
DEFAULT_MAX_BYTES = 128 * 1024 * 1024  # NEXTCLOUD_KEPT_ANSWERS_MB


@dataclass(frozen=True)
class KeptAnswer:
    """One kept answer: what Nextcloud said (`value`) and the validator that dates it."""

    validator: str
    value: Any
    size: int


class KeptAnswers:
    """Per user and key, the last answer and its validator (see the module's docstring)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("KeptAnswers needs room for at least one answer")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], KeptAnswer] = OrderedDict()
        self._bytes = 0
        self.flights: Flights[Any] = Flights()

    async def shared(self, user: str, key: str, basis: str, read: Callable[[], Awaitable[Any]]) -> Any:
        """`read()`, or the answer of the same read already under way for the same user, key and
        `basis`: what the caller confirmed with Nextcloud itself just before (a folder's ETag),
        so that whoever joins gets an answer as new as the one it would read (flights.py)."""
        return await self.flights.run((user, key, basis), read)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """The bytes kept, by the callers' estimates."""
        return self._bytes

    def get(self, user: str, key: str) -> KeptAnswer | None:
        """The answer kept for `user` under `key` (to be revalidated before use), or None."""
        entry = self._entries.get((user, key))
        if entry is not None:
            self._entries.move_to_end((user, key))
        return entry

    def put(self, user: str, key: str, validator: str, value: Any, size: int) -> None:
        """Keep `value` dated by `validator`; an empty validator or an oversized answer replaces
        nothing and is not kept (what was kept under the key is dropped: it is stale)."""
        self.forget(user, key)
        if not validator or size < 0 or size > self.max_bytes // 4:
            return
        self._entries[(user, key)] = KeptAnswer(validator, value, size)
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.size

    def forget(self, user: str, key: str) -> None:
        """Drop what is kept for `user` under `key` (after a change made through this server)."""
        dropped = self._entries.pop((user, key), None)
        if dropped is not None:
            self._bytes -= dropped.size

    def forget_user(self, user: str, prefix: str = "") -> None:
        """Drop what is kept for `user` under keys starting with `prefix` (all keys by default)."""
        for entry_key in [k for k in self._entries if k[0] == user and k[1].startswith(prefix)]:
            self.forget(*entry_key)
