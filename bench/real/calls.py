"""One measured call, and the subjects' sessions, shared by the benchmark's sections: a call's
wall time (client side) with its cost to Nextcloud (meter.py), recorded rather than raised."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from _mcp import published_env
from floors import forget_cookies
from mcp import ClientSession, StdioServerParameters, stdio_client
from meter import Meter
from published import ensure_installed

__all__ = ["CALL_TIMEOUT_S", "Call", "floor_client", "measured", "published_session", "tool_call"]

CALL_TIMEOUT_S = 180.0
Call = Callable[[], Awaitable[Any]]


def _one(seconds: float, cost: Any, ok: bool, note: str | None = None) -> dict[str, Any]:
    return {
        "wall_s": seconds,
        "requests": len(cost.requests),
        "bytes": cost.bytes,
        "statuses": sorted({r.status for r in cost.requests}),
        # what was asked, in the order nginx logged it (paths without the query)
        "asked": [f"{r.method} {r.path.partition('?')[0]}" for r in cost.requests],
        # what was read of calendar objects and files (not discovery: PROPFIND of collections)
        "object_bytes": sum(r.bytes for r in cost.requests if r.method in ("REPORT", "GET")),
        "nc_cpu_s": cost.cpu_s,
        "php_cpu_s": cost.php_s,
        "nginx_cpu_s": cost.nginx_s,
        "ok": ok,
        "note": note,
    }


async def measured(meter: Meter, call: Call) -> tuple[dict[str, Any], Any]:
    meter.mark()
    started = time.perf_counter()
    try:
        answer = await asyncio.wait_for(call(), CALL_TIMEOUT_S)
        ok, note = True, None
    except Exception as exc:  # recorded, not fatal: one failing tool must not end the run
        answer, ok, note = None, False, f"{type(exc).__name__}: {exc}"[:300]
    seconds = time.perf_counter() - started
    return _one(seconds, meter.cost(), ok, note), answer


def tool_call(session: ClientSession, tool: str, args: dict[str, Any]) -> Call:
    async def call() -> Any:
        result = await session.call_tool(tool, args)
        if result.is_error:
            raise RuntimeError(f"tool error: {str(result.content)[:200]}")
        return result

    return call


def floor_client(url: str, password: str) -> httpx.AsyncClient:
    """The floor's client: one keep-alive connection with alice's app password, no cookies."""
    return forget_cookies(
        httpx.AsyncClient(
            base_url=url,
            auth=("alice", password),
            timeout=CALL_TIMEOUT_S,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            headers={"User-Agent": "bench-real-floor"},
        )
    )


@asynccontextmanager
async def published_session(url: str, password: str, workdir: Path) -> AsyncIterator[ClientSession]:
    script = ensure_installed()
    env = published_env(url, "alice", password, workdir)
    params = StdioServerParameters(
        command=str(script), args=["run", "--transport", "stdio"], env=env, cwd=str(workdir)
    )
    with open(workdir / "published.log", "a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
