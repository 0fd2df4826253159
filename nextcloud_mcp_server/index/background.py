"""Find indexes kept current between calls, where the server holds a credential (docs/ADR/0084):
the configured user in single-user mode, offline-access users who agreed to indexing.

Every `every` seconds a pass runs one sync round (rounds.py) for each such user: at most
`round_seconds` each, at most `at_once` users at a time, all kinds. A round reads only what changed
(an unchanged Nextcloud costs about one request per source) and records a folder's or container's
version only once everything below it is indexed, so a round cut short, or a process stopped
mid-round, is taken up where it stopped by the next round, here or in another replica. A user
whose round is under way elsewhere (`FindIndex.hold`: PostgreSQL's advisory lock across replicas)
is skipped in this pass. A failing user is logged (never their credential) and the others go on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.service import FindService

if TYPE_CHECKING:
    from nextcloud_mcp_server.index.sync import Round
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["MAX_USERS_PER_PASS", "BackgroundSync", "Outcome"]

logger = logging.getLogger(__name__)

MAX_USERS_PER_PASS = 10_000  # a bound on one pass (users beyond it are not kept current)


@dataclass(frozen=True)
class Outcome:
    """What a pass did for one user: their round, or why there was none."""

    user: str
    round: Round | None = None
    skipped: str = ""  # "held elsewhere", or the error that stopped the round


class BackgroundSync:
    def __init__(
        self,
        service: FindService,
        users: Callable[[int], Awaitable[list[str]]],
        wanted: Callable[[str], Awaitable[bool]],
        client_for: Callable[[str], Awaitable[NextcloudClient]],
        *,
        every: float,
        round_seconds: float,
        at_once: int,
        limits: Limits,
    ) -> None:
        """`users(limit)`: whose indexes to keep current now; `wanted(user)`: whether that still
        holds (asked again after a round: an answer withdrawn or a grant revoked meanwhile, in any
        replica, deletes what the round read); `client_for(user)`: a Nextcloud client with that
        user's credential."""
        self.service = service
        self._users = users
        self._wanted = wanted
        self._client_for = client_for
        self.every = every
        self.round_seconds = round_seconds
        self.at_once = at_once
        self.limits = limits
        self.passes = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def window(self) -> float:
        """How old the start of a user's last complete round may be for a call to answer without
        its own (docs/ADR/0089): one interval and one round, while passes keep up."""
        return self.every + self.round_seconds

    def start(self) -> None:
        if self.every > 0 and self._task is None:
            self._task = asyncio.create_task(self._run(), name="find-background-sync")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                await self.pass_once()
            except Exception:
                logger.exception("a background pass of the find index failed")
            await asyncio.sleep(max(1.0, self.every - (time.monotonic() - started)))

    async def pass_once(self) -> list[Outcome]:
        """One round for every user (at most `at_once` at a time); what each came to."""
        users = (await self._users(MAX_USERS_PER_PASS))[:MAX_USERS_PER_PASS]
        slots = asyncio.Semaphore(self.at_once)

        async def one(user: str) -> Outcome:
            async with slots:
                return await self.sync_user(user)

        outcomes = list(await asyncio.gather(*(one(user) for user in users)))
        self.passes += 1
        return outcomes

    async def sync_user(self, user: str) -> Outcome:
        """One round for `user`, unless one of theirs is under way (here or in another replica)."""
        index = await self.service.index()
        async with index.hold(user) as held:
            if not held:
                return Outcome(user, skipped="held elsewhere")
            if not await self._wanted(user):  # revoked while waiting for a slot
                return Outcome(user, skipped="no longer wanted")
            started = time.monotonic()
            try:
                nc = await self._client_for(user)
                # here, not at the top: only for start-up cost (the sources import icalendar,
                # vCard and every app's client; docs/ADR/0090)
                from nextcloud_mcp_server.index.rounds import ALL_KINDS, sync_round

                work = await sync_round(index, user, nc, set(ALL_KINDS), self.round_seconds, self.limits)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the credential refused, Nextcloud down: the next pass retries
                logger.info("background sync of a find index stopped: %s", type(exc).__name__)
                return Outcome(user, skipped=type(exc).__name__)
            if self.service.forgotten_since(user, started) or not await self._wanted(user):
                await self.service.forget(user)  # forgotten or revoked while the round read
                return Outcome(user, skipped="no longer wanted")
        if work.read or work.removed:
            self.service.changed(user)
        self.service.continue_in_background(user)  # embeddings for meaning, from the index's text
        return Outcome(user, round=work)
