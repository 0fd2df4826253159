"""Facts discovered once per user and process (never secrets), kept in bounded maps.

Discovery is single-flight per key: when a user's first calls arrive together, one of them asks
Nextcloud and the others wait for its answer, instead of each asking the same question.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["Discovered", "DiscoveryCache"]


class Discovered(dict[str, str]):
    """A dict that forgets its oldest entries beyond `limit` (insertion order), and fills a
    missing entry once however many callers ask for it at the same time (`once`)."""

    def __init__(self, limit: int = 10_000) -> None:
        super().__init__()
        self.limit = limit
        self._pending: dict[str, asyncio.Future[str]] = {}

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        while len(self) > self.limit:
            del self[next(iter(self))]

    async def once(self, key: str, discover: Callable[[], Awaitable[str]]) -> str:
        """The value of `key`, discovered by the first caller; callers arriving meanwhile share
        its answer (or its error). A failure is not remembered: the next call asks again."""
        while key not in self:
            pending = self._pending.get(key)
            if pending is None:
                return await self._discover(key, discover)
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled
                # the caller that was asking was cancelled, not this one: ask again
        return self[key]

    async def _discover(self, key: str, discover: Callable[[], Awaitable[str]]) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            value = await discover()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # marked as seen: nobody need be waiting
            raise
        finally:
            del self._pending[key]
        self[key] = value
        future.set_result(value)
        return value


@dataclass
class DiscoveryCache:
    """What is discovered once per user and process: facts about the account, never secrets."""

    dav_user_ids: Discovered = field(default_factory=Discovered)
    principals: Discovered = field(default_factory=Discovered)
    calendar_homes: Discovered = field(default_factory=Discovered)
    addressbook_homes: Discovered = field(default_factory=Discovered)
