"""Single-flight: callers that want the same expensive read at the same time share one request.

A caller joins a flight only under a key that says everything its answer depends on: the user
(never shared between users) and what the caller itself has just confirmed with Nextcloud using
its own credential, such as the folder's ETag it read (docs/ADR/0069). So a joiner gets an answer
read after the state it saw itself was confirmed, exactly what it would have got had it asked on
its own a moment later, and a credential Nextcloud refuses fails on its own request before it
can join anything.

A failure is shared with those waiting, but not remembered; a caller whose own wait is cancelled
leaves the flight to the others, and when the caller that runs the flight is cancelled the others
start it again. `drop` ends a request asked in advance whose answer is no longer needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["Flights", "drop"]

V = TypeVar("V")


class Flights(Generic[V]):
    """The reads in flight, by key; `run` starts one or joins the one under way."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, asyncio.Future[V]] = {}
        self.started = 0  # reads actually made, and callers that joined one (tests count them)
        self.joined = 0

    def __len__(self) -> int:
        return len(self._pending)

    async def run(self, key: Hashable, read: Callable[[], Awaitable[V]]) -> V:
        while True:
            pending = self._pending.get(key)
            if pending is None:
                return await self._lead(key, read)
            self.joined += 1
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled
                # the caller running the read was cancelled, not this one: read again

    async def _lead(self, key: Hashable, read: Callable[[], Awaitable[V]]) -> V:
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        self.started += 1
        try:
            value = await read()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # marked as seen: nobody need be waiting
            raise
        finally:
            del self._pending[key]
        future.set_result(value)
        return value


async def drop(task: asyncio.Task[Any]) -> None:
    """Cancel `task`, a request asked in advance whose answer is not needed any more, and wait
    until it has stopped; an error it ended with is marked seen (asyncio would log it unseen)."""
    task.cancel()
    await asyncio.wait([task])
    if not task.cancelled():
        task.exception()
