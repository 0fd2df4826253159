"""Calls of the stateless protocol era limited as calls (ADR 0054): a client that keeps within a
generous rate is never refused, a flood is cut to that rate, one user's calls in flight are
capped - and none of it touches another user's budget or the session-open budget."""

from __future__ import annotations

import asyncio

import httpx
from starlette.types import Receive, Scope, Send

from nextcloud_mcp_server.web.call_limits import ByProtocolEra, StatelessCallLimiter, is_stateless


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def ok(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def modern(app: StatelessCallLimiter, address: str = "127.0.0.1") -> httpx.AsyncClient:
    """A client of the 2026-07-28 protocol at `address` (single-user mode: the address is the user)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=(address, 1234)),  # type: ignore[arg-type]
        base_url="http://t",
        headers={"MCP-Protocol-Version": "2026-07-28"},
    )


async def test_600_calls_a_minute_are_never_refused_and_a_flood_is_cut_to_the_rate() -> None:
    clock = Clock()
    limiter = StatelessCallLimiter(ok, per_minute=1200, in_flight=32, clock=clock)
    async with modern(limiter) as client:
        steady = []
        for _ in range(600):  # one call every 0.1 s for a minute
            steady.append((await client.post("/mcp")).status_code)
            clock.now += 0.1
        assert steady == [200] * 600
        clock.now += 60  # the bucket is full again
        flood = [(await client.post("/mcp")).status_code for _ in range(1000)]  # all at once
        assert flood.count(200) == 120  # the burst: a tenth of a minute's calls
        refused = await client.post("/mcp")
        assert refused.status_code == 429
        assert "MCP_STATELESS_CALLS_PER_MINUTE" in refused.json()["error"]["message"]
        assert int(refused.headers["Retry-After"]) >= 1
        clock.now += 1.0  # then 20 a second, however many are sent
        again = [(await client.post("/mcp")).status_code for _ in range(100)]
        assert again.count(200) == 20
    async with modern(limiter, "127.0.0.2") as other:  # another user (single-user mode: another address)
        assert (await other.post("/mcp")).status_code == 200


async def test_one_users_calls_in_flight_are_capped() -> None:
    release = asyncio.Event()
    started = 0

    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal started
        started += 1
        await release.wait()
        await ok(scope, receive, send)

    limiter = StatelessCallLimiter(slow, per_minute=60_000, in_flight=4)
    async with modern(limiter) as client:
        calls = [asyncio.create_task(client.post("/mcp")) for _ in range(4)]
        while started < 4:
            await asyncio.sleep(0.01)
        fifth = await client.post("/mcp")
        release.set()
        done = await asyncio.gather(*calls)
        after = await client.post("/mcp")
    assert fifth.status_code == 429
    assert "MCP_STATELESS_CALLS_IN_FLIGHT_PER_USER" in fifth.json()["error"]["message"]
    assert [d.status_code for d in done] == [200] * 4
    assert after.status_code == 200
    assert limiter.running("addr:127.0.0.1") == 0


async def test_only_requests_of_a_stateless_era_are_calls() -> None:
    seen: list[str] = []

    def named(name: str) -> object:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            seen.append(name)
            await ok(scope, receive, send)

        return app

    router = ByProtocolEra(sessions=named("sessions"), stateless=named("calls"))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=router)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        await client.post("/mcp")  # initialize of a handshake-era client: no version header yet
        await client.post("/mcp", headers={"MCP-Protocol-Version": "2025-11-25"})
        await client.post("/mcp", headers={"MCP-Protocol-Version": "2025-06-18"})
        await client.post("/mcp", headers={"MCP-Protocol-Version": "2026-07-28"})
        await client.post("/mcp", headers={"MCP-Protocol-Version": "2099-01-01"})  # as the SDK: modern
    assert seen == ["sessions", "sessions", "sessions", "calls", "calls"]
    assert not is_stateless({"type": "http", "headers": []})
