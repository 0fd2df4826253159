"""Facts discovered once per user and process (never secrets), kept in bounded maps.

Discovery is single-flight per key: when a user's first calls arrive together, one of them asks
Nextcloud and the others wait for its answer, instead of each asking the same question.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from nextcloud_mcp_server.nextcloud.flights import Flights

__all__ = ["Discovered", "DiscoveryCache"]


class Discovered(dict[str, str]):
    """A dict that forgets its oldest entries beyond `limit` (insertion order), and fills a
    missing entry once however many callers ask for it at the same time (`once`)."""

    def __init__(self, limit: int = 10_000) -> None:
        super().__init__()
        self.limit = limit
        self._flights: Flights[str] = Flights()

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        while len(self) > self.limit:
            del self[next(iter(self))]

    async def once(self, key: str, discover: Callable[[], Awaitable[str]]) -> str:
        """The value of `key`, discovered by the first caller; callers arriving meanwhile share
        its answer (or its error). A failure is not remembered: the next call asks again."""
        if key in self:
            return self[key]

        async def discover_and_keep() -> str:
            value = await discover()
            self[key] = value  # kept before those waiting are answered
            return value

        return await self._flights.run(key, discover_and_keep)


@dataclass
class DiscoveryCache:
    """What is discovered once per user and process: facts about the account, never secrets."""

    dav_user_ids: Discovered = field(default_factory=Discovered)
    principals: Discovered = field(default_factory=Discovered)
    calendar_homes: Discovered = field(default_factory=Discovered)
    addressbook_homes: Discovered = field(default_factory=Discovered)
