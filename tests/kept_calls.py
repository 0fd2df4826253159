"""Calls kept up by several workers while a replica is killed under them (the replica tests of
both eras): each worker holds one client and calls a tool again and again; a call lost with the
replica is counted, with why, and the worker connects again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

from tests.mcp_clients import structured

__all__ = ["KeptCalls"]


@dataclass
class KeptCalls:
    """How many calls were answered and lost so far, why each was lost, and the signal to stop."""

    answered: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def keep_calling(
        self, connect: Callable[[], AbstractAsyncContextManager[Client]], tool: tuple[str, dict[str, Any]]
    ) -> None:
        """One client per worker: when the killed replica cuts a reply mid-body, the SDK tears down
        the client's whole transport, not only the call, so the worker counts one lost call and
        connects again."""
        while not self.stop.is_set():
            lost: str | None = None
            try:
                async with connect() as client:
                    while not self.stop.is_set():
                        try:
                            result = await client.call_tool(*tool)
                        except Exception as exc:  # the call in flight on the killed replica
                            lost = repr(exc)[:300]
                            break
                        structured(result)
                        self.answered += 1
            except Exception as exc:  # the same call, seen as the transport's end
                lost = lost or repr(exc)[:300]
            if lost is not None:
                self.failed += 1
                self.errors.append(lost)

    async def answered_at_least(self, count: int) -> None:
        """Back once `count` calls were answered (the caller bounds the wait)."""
        while self.answered < count:
            await asyncio.sleep(0.05)  # polling the workers' count
