"""Single-flight discovery: the first calls of a user, arriving together, ask Nextcloud once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from nextcloud_mcp_server.nextcloud.discovery import Discovered


class Asker:
    """A discovery that waits until released, counting how often it was asked."""

    def __init__(self, answer: str | Exception = "alice-dav") -> None:
        self.asked = 0
        self.answer = answer
        self.release = asyncio.Event()

    async def __call__(self) -> str:
        self.asked += 1
        await self.release.wait()
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def until(condition: Callable[[], bool], deadline: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0)


async def test_callers_arriving_together_share_one_question() -> None:
    facts, ask = Discovered(), Asker()
    calls = [asyncio.create_task(facts.once("alice", ask)) for _ in range(10)]
    await until(lambda: ask.asked == 1)
    ask.release.set()
    assert await asyncio.gather(*calls) == ["alice-dav"] * 10
    assert ask.asked == 1
    assert await facts.once("alice", ask) == "alice-dav"  # remembered
    assert ask.asked == 1


async def test_an_error_reaches_every_waiter_and_is_not_remembered() -> None:
    facts, failing = Discovered(), Asker(RuntimeError("Nextcloud unreachable"))
    calls = [asyncio.create_task(facts.once("alice", failing)) for _ in range(3)]
    await until(lambda: failing.asked == 1)
    failing.release.set()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert [str(r) for r in results] == ["Nextcloud unreachable"] * 3
    working = Asker()
    working.release.set()
    assert await facts.once("alice", working) == "alice-dav"
    assert (failing.asked, working.asked) == (1, 1)


async def test_when_the_asking_caller_is_cancelled_a_waiting_one_asks() -> None:
    facts, ask = Discovered(), Asker()
    first = asyncio.create_task(facts.once("alice", ask))
    await until(lambda: ask.asked == 1)
    second = asyncio.create_task(facts.once("alice", ask))
    await asyncio.sleep(0)  # the second caller is now waiting for the first one's answer
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await until(lambda: ask.asked == 2)
    ask.release.set()
    assert await second == "alice-dav"


def test_oldest_entries_are_forgotten_beyond_the_limit() -> None:
    facts = Discovered(limit=2)
    for user in ("a", "b", "c"):
        facts[user] = f"{user}-dav"
    assert list(facts) == ["b", "c"]
