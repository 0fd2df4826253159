"""Facts discovered once per user and process (never secrets), kept in bounded maps.

Discovery is single-flight per key: when a user's first calls arrive together, one of them asks
Nextcloud and the others wait for its answer, instead of each asking the same question.

A user's capabilities (`cloud/capabilities`) are kept for a while, not for good: an app may be
enabled or upgraded meanwhile. The question which apps a user has asks them anyway (apps.py), and
what it was told is kept here, so a toolset that reads a capability (Polls' dialect, whether
Tables is there) asks nothing more within `CAPABILITIES_SECONDS` (ADR 0094).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nextcloud_mcp_server.nextcloud.flights import Flights

__all__ = ["CAPABILITIES_SECONDS", "Discovered", "DiscoveryCache", "Recent"]

CAPABILITIES_SECONDS = 300.0  # as long as the enabled apps are kept (NEXTCLOUD_APPS_CACHE_SECONDS' default)


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


class Recent:
    """Answers (JSON objects) per key for `seconds` after they were given; at most `limit` keys
    (the oldest answer forgotten first). Callers that find none arriving together share one
    question; a failure is not remembered."""

    def __init__(
        self,
        seconds: float = CAPABILITIES_SECONDS,
        limit: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.limit = limit
        self._clock = clock
        self._answers: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._flights: Flights[dict[str, Any]] = Flights()

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._answers.pop(key, None)
        self._answers[key] = (self._clock() + self.seconds, value)
        while len(self._answers) > self.limit:
            self._answers.popitem(last=False)

    def get(self, key: str) -> dict[str, Any] | None:
        found = self._answers.get(key)
        return found[1] if found is not None and found[0] > self._clock() else None

    async def once(self, key: str, ask: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """The answer kept under `key` while it is recent, else `ask()`'s (then kept)."""
        found = self.get(key)
        if found is not None:
            return found

        async def ask_and_keep() -> dict[str, Any]:
            value = await ask()
            self.put(key, value)
            return value

        return await self._flights.run(key, ask_and_keep)


@dataclass
class DiscoveryCache:
    """What is discovered once per user and process: facts about the account, never secrets."""

    dav_user_ids: Discovered = field(default_factory=Discovered)
    principals: Discovered = field(default_factory=Discovered)
    calendar_homes: Discovered = field(default_factory=Discovered)
    addressbook_homes: Discovered = field(default_factory=Discovered)
    capabilities: Recent = field(default_factory=Recent)  # per user id
