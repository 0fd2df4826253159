"""Issue 13's attacks on the HTTP front, rerun against a local server (`run --transport http`):

1. sessions: one user (127.0.0.1) opens ATTACK_SESSIONS sessions as fast as it can; how many it
   holds at the end, the server's RSS growth, and `/health` latency for another user (127.0.0.2,
   a second loopback address) meanwhile, who then opens a session of their own. Run with the
   default limits and with the limits lifted (as before issue 13), for the comparison.
2. slowloris: SLOW_CONNECTIONS connections send an unfinished request header and wait; when the
   server closes them, and `/health` latency for another user meanwhile.

    .venv/bin/python bench/hostile_front.py [--quick]

Writes bench/results/hostile_front.json. Timing belongs here, never in the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from _procs import clean_env, cpu_seconds, free_port, percentile, rss_kib, spawn, write_result  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
UNLIMITED = {
    "MCP_MAX_SESSIONS": "100000",
    "MCP_MAX_SESSIONS_PER_USER": "100000",
    "MCP_SESSION_OPENS_PER_MINUTE": "60000",
}


def _server_env(port: int, extra: dict[str, str]) -> dict[str, str]:
    return clean_env(
        {
            # Nothing here reaches Nextcloud: /health and initialize are answered by the server alone.
            "NEXTCLOUD_HOST": "http://127.0.0.1:9",
            "NEXTCLOUD_USERNAME": "bench",
            "NEXTCLOUD_PASSWORD": "bench-app-password",
            "LOG_LEVEL": "WARNING",
            "MCP_PORT": str(port),
            **extra,
        }
    )


def _probe_loop(base: str, stop: Any, out: Any) -> None:
    """In a process of its own (the attacker's event loop must not delay it): another user's
    `/health` requests, one after another, until `stop` is set."""
    seconds: list[float] = []
    failures = 0
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(transport=transport, timeout=10) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                ok = client.get(f"{base}/health").status_code == 200
            except httpx.HTTPError:
                ok = False
            if ok:
                seconds.append(time.perf_counter() - started)
            else:
                failures += 1
            time.sleep(0.02)
    out.put((seconds, failures))


class Probe:
    def __init__(self, base: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._out = context.Queue()
        self._process = context.Process(target=_probe_loop, args=(base, self._stop, self._out))
        self.seconds: list[float] = []
        self.failures = 0

    def start(self) -> None:
        self._process.start()

    def finish(self) -> dict[str, Any]:
        self._stop.set()
        self.seconds, self.failures = self._out.get(timeout=60)
        self._process.join(30)
        s = self.seconds or [float("nan")]
        return {
            "requests": len(self.seconds),
            "failures": self.failures,
            "p50_ms": round(percentile(s, 0.50) * 1000, 1),
            "p99_ms": round(percentile(s, 0.99) * 1000, 1),
            "max_ms": round(max(s) * 1000, 1),
        }


async def _open_many(base: str, count: int, concurrency: int) -> tuple[collections.Counter[int], list[str]]:
    statuses: collections.Counter[int] = collections.Counter()
    ids: list[str] = []
    queue = iter(range(count))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:

        async def worker() -> None:
            for _ in queue:
                try:
                    answer = await client.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)
                except httpx.HTTPError:
                    statuses[0] += 1
                    continue
                statuses[answer.status_code] += 1
                if "mcp-session-id" in answer.headers:
                    ids.append(answer.headers["mcp-session-id"])

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses, ids


async def _alive(base: str, ids: list[str]) -> int:
    """How many of these sessions still answer (a ping)."""
    body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    alive = 0
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=16)) as client:
        sem = asyncio.Semaphore(16)

        async def ping(sid: str) -> None:
            nonlocal alive
            async with sem:
                headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
                answer = await client.post(f"{base}/mcp", json=body, headers=headers)
                alive += answer.status_code == 200

        await asyncio.gather(*(ping(s) for s in ids))
    return alive


async def session_flood(work: Path, sessions: int, limits: dict[str, str], label: str) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "nextcloud_mcp_server", "run", "--transport", "http"]
    env = _server_env(port, limits)
    with spawn(
        args, env=env, log=work / f"server-{label}.log", cwd=work, ready_url=f"{base}/health"
    ) as server:
        before, cpu_before = rss_kib(server.pid), cpu_seconds(server.pid)
        probe = Probe(base)
        probe.start()
        await asyncio.sleep(1.0)  # the probe's own start-up
        started = time.perf_counter()
        statuses, ids = await _open_many(base, sessions, concurrency=32)
        took = time.perf_counter() - started
        health = probe.finish()
        after, cpu = rss_kib(server.pid), cpu_seconds(server.pid) - cpu_before
        alive = await _alive(base, ids)
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(transport=transport, timeout=10) as other:
            victim = (await other.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)).status_code
    return {
        "limits": limits or "defaults (10 per user, 60 new a minute per user, 1000 in all)",
        "attempted": sessions,
        "seconds": round(took, 1),
        "answers": dict(statuses),
        "sessions_the_attacker_holds": alive,
        "rss_before_mib": round(before / 1024, 1),
        "rss_after_mib": round(after / 1024, 1),
        "rss_growth_kib_per_attempt": round((after - before) / sessions, 1),
        "server_cpu_ms_per_attempt": round(cpu * 1000 / sessions, 2),
        "other_user_health": health,
        "other_user_opens_a_session": victim,
    }


async def slowloris(work: Path, connections: int, header_timeout: float) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "nextcloud_mcp_server", "run", "--transport", "http"]
    env = _server_env(port, {"MCP_HEADER_TIMEOUT_SECONDS": str(header_timeout)})
    with spawn(args, env=env, log=work / "server-slowloris.log", cwd=work, ready_url=f"{base}/health"):
        probe = Probe(base)
        probe.start()
        await asyncio.sleep(1.0)
        started = time.perf_counter()
        closed_after: list[float] = []

        async def hold() -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            await writer.drain()
            try:
                await asyncio.wait_for(reader.read(), timeout=header_timeout * 6)  # EOF when closed
                closed_after.append(time.perf_counter() - started)
            except (TimeoutError, ConnectionError):
                pass
            finally:
                writer.close()

        await asyncio.gather(*(hold() for _ in range(connections)), return_exceptions=True)
        health = probe.finish()
    return {
        "connections": connections,
        "header_timeout_s": header_timeout,
        "closed_by_server": len(closed_after),
        "closed_after_s": {
            "first": round(min(closed_after, default=float("nan")), 1),
            "last": round(max(closed_after, default=float("nan")), 1),
        },
        "other_user_health": health,
    }


async def main(quick: bool) -> None:
    work = ROOT / "bench" / ".work" / "hostile_front"
    work.mkdir(parents=True, exist_ok=True)
    sessions = 300 if quick else 2000
    result = {
        "sessions_capped": await session_flood(work, sessions, {}, "capped"),
        "sessions_uncapped": await session_flood(work, sessions, UNLIMITED, "uncapped"),
        "slowloris": await slowloris(work, 100 if quick else 400, 10.0),
    }
    out = write_result("hostile_front", result)
    for name, part in result.items():
        print(f"{name}: {part}")
    print(f"written to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sessions and connections")
    asyncio.run(main(parser.parse_args().quick))
