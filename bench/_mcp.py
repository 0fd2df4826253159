"""MCP servers under test (this one, the published package) as processes, the call mix, and the
drivers: sequential latency and concurrent throughput, over MCP (SDK client, streamable HTTP) or
directly over HTTP to Nextcloud (the floor)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from _procs import ROOT, clean_env, cpu_seconds, free_port, spawn
from published import ensure_installed

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.nextcloud.dav.webdav import PROPFIND_BODY
from tests.mcp_clients import http_session

__all__ = [
    "Call",
    "CallFailed",
    "Server",
    "Target",
    "call_mix",
    "direct_target",
    "mcp_target",
    "our_server",
    "published_server",
    "sdk_floor_server",
    "sequential",
    "throughput",
]

NOTES_API = "/index.php/apps/notes/api/v1"
CALL_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Call:
    kind: str  # notes_list | note_get | webdav_list | file_read
    tool: str
    args: dict[str, Any]


def call_mix(kinds: Sequence[str], note_ids: Sequence[int], folder: str, count: int) -> list[Call]:
    """`count` calls cycling through `kinds`; note ids and files rotate deterministically."""
    calls = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        n = i // len(kinds)
        if kind == "notes_list":
            calls.append(Call(kind, "nc_notes_list_notes", {}))
        elif kind == "note_get":
            calls.append(Call(kind, "nc_notes_get_note", {"note_id": note_ids[n % len(note_ids)]}))
        elif kind == "webdav_list":
            calls.append(Call(kind, "nc_webdav_list_directory", {"path": folder}))
        elif kind == "file_read":
            calls.append(Call(kind, "nc_webdav_read_file", {"path": f"{folder}/file-{n % 20:03}.txt"}))
        else:
            raise ValueError(kind)
    return calls


@dataclass
class Server:
    name: str
    url: str  # the MCP endpoint
    pid: int
    log: Path


@contextmanager
def our_server(
    nextcloud: str, env: Mapping[str, str], logdir: Path, port: int | None = None
) -> Iterator[Server]:
    """`python -m nextcloud_mcp_server run --transport http` with `env` (credentials or OAuth)."""
    port = port or free_port()
    args = [sys.executable, "-m", "nextcloud_mcp_server", "run", "--transport", "http", "--port", str(port)]
    # These parts measure throughput and memory with many sessions from one address: the per-user
    # session and connection limits (ADR 0020; measured by hostile_front.py) are lifted here.
    lifted = {
        "MCP_MAX_SESSIONS": "100000",
        "MCP_MAX_CONNECTIONS": "100000",
        "MCP_MAX_SESSIONS_PER_USER": "100000",
        "MCP_SESSION_OPENS_PER_MINUTE": "60000",
    }
    full_env = clean_env({"NEXTCLOUD_HOST": nextcloud, "LOG_LEVEL": "WARNING", **lifted, **env})
    log = logdir / f"ours-{port}.log"
    with spawn(args, env=full_env, log=log, cwd=logdir, ready_url=f"http://127.0.0.1:{port}/health") as p:
        yield Server("nextcloud-mcp-server (this)", f"http://127.0.0.1:{port}/mcp", p.pid, log)


@contextmanager
def sdk_floor_server(nextcloud: str, user: str, password: str, logdir: Path) -> Iterator[Server]:
    """`bench/sdk_floor.py`: a bare MCPServer giving this server's answers to the mix (the SDK floor)."""
    port = free_port()
    args = [sys.executable, str(ROOT / "bench" / "sdk_floor.py"), str(port)]
    env = clean_env({"NEXTCLOUD_HOST": nextcloud, "NEXTCLOUD_USERNAME": user, "NEXTCLOUD_PASSWORD": password})
    log = logdir / f"sdk-floor-{port}.log"
    with spawn(args, env=env, log=log, cwd=logdir, ready_url=f"http://127.0.0.1:{port}/mcp") as p:
        yield Server("SDK floor (bare, same answers)", f"http://127.0.0.1:{port}/mcp", p.pid, log)


def published_env(nextcloud: str, user: str, password: str, workdir: Path) -> dict[str, str]:
    """Single-user BasicAuth mode of the published package, with its optional services off."""
    return clean_env(
        {
            "NEXTCLOUD_HOST": nextcloud,
            "NEXTCLOUD_USERNAME": user,
            "NEXTCLOUD_PASSWORD": password,
            "LOG_LEVEL": "WARNING",
            # Prometheus exporter: on by default, on its own port 9090.
            "METRICS_ENABLED": "false",
            # Semantic search / vector sync (Qdrant, embeddings) and background operations: off by
            # default; said explicitly.
            "ENABLE_SEMANTIC_SEARCH": "false",
            "ENABLE_BACKGROUND_OPERATIONS": "false",
            # Its token store (SQLite): in the work folder instead of a temp file.
            "TOKEN_STORAGE_DB": str(workdir / "published-tokens.db"),
        }
    )


@contextmanager
def published_server(
    nextcloud: str, user: str, password: str, logdir: Path, port: int | None = None
) -> Iterator[Server]:
    """The published package over streamable HTTP (`run --transport streamable-http`)."""
    script = ensure_installed()
    port = port or free_port()
    args = [str(script), "run", "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--log-level", "warning"]
    env = published_env(nextcloud, user, password, logdir)
    log = logdir / f"published-{port}.log"
    # cwd: a folder of its own, so it finds no settings.toml or .env of ours.
    ready = f"http://127.0.0.1:{port}/health/live"
    with spawn(args, env=env, log=log, cwd=logdir, ready_url=ready, timeout=120) as p:
        yield Server("nextcloud-mcp-server 0.202.1 (PyPI)", f"http://127.0.0.1:{port}/mcp", p.pid, log)


# --- targets: something that performs a Call, either over MCP or directly -------------------------

Perform = Callable[[Call], Awaitable[None]]  # raises CallFailed (or anything) when the call failed


class CallFailed(Exception):
    """A call that was answered, but not with success: a tool error, an HTTP error status."""


@dataclass
class Target:
    """A way to perform calls; `open(stack)` returns a performer bound to a fresh session/client."""

    name: str
    open: Callable[[AsyncExitStack], Awaitable[Perform]]
    pid: int | None = None  # the server process, for CPU accounting (None: no server in between)


def mcp_target(server: Server, headers: Callable[[int], dict[str, str]] | None = None) -> Target:
    """Over MCP: one SDK `ClientSession` (streamable HTTP) per opened performer."""
    opened = {"n": 0}

    async def open_(stack: AsyncExitStack) -> Perform:
        index = opened["n"]
        opened["n"] += 1
        session = await stack.enter_async_context(
            http_session(server.url, headers=headers(index) if headers else None)
        )

        async def perform(call: Call) -> None:
            result = await session.call_tool(call.tool, call.args)
            if result.is_error:
                raise CallFailed(f"{call.tool}: {str(result.content)[:200]}")

        return perform

    return Target(server.name, open_, server.pid)


def direct_target(nextcloud: str, user: str, password: str) -> Target:
    """The floor: the same Nextcloud requests our server makes per tool, with a keep-alive httpx
    client and Basic auth; responses read whole (and JSON parsed for the Notes API). Each opened
    performer has its own client (one connection per worker under concurrency: one shared pool
    costs the client more CPU per request than the double spends answering it, at 64 workers)."""
    files = f"/remote.php/dav/files/{user}"
    propfind_headers = {"Depth": "1", "Content-Type": "application/xml; charset=utf-8"}
    json_headers = {"Accept": "application/json"}

    async def open_(stack: AsyncExitStack) -> Perform:
        client = await stack.enter_async_context(
            httpx.AsyncClient(base_url=nextcloud, auth=(user, password), timeout=CALL_TIMEOUT_S)
        )

        async def perform(call: Call) -> None:
            if call.kind == "notes_list":
                params = {"chunkSize": 200, "exclude": "content"}
                response = await client.get(f"{NOTES_API}/notes", params=params, headers=json_headers)
                response.json()
            elif call.kind == "note_get":
                response = await client.get(f"{NOTES_API}/notes/{call.args['note_id']}", headers=json_headers)
                response.json()
            elif call.kind == "webdav_list":
                body = PROPFIND_BODY.encode()
                path = f"{files}/{call.args['path']}/"
                response = await client.request("PROPFIND", path, headers=propfind_headers, content=body)
            elif call.kind == "file_read":
                response = await client.get(f"{files}/{call.args['path']}")
            else:
                raise ValueError(call.kind)
            if response.status_code not in (200, 207):
                raise CallFailed(f"{call.kind}: HTTP {response.status_code}")

        return perform

    return Target("direct HTTP (floor)", open_, None)


# --- drivers -------------------------------------------------------------------------------------


@dataclass
class Sequential:
    seconds: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0
    first_error: str | None = None


async def sequential(perform: Perform, calls: Sequence[Call], result: Sequential) -> None:
    """One call at a time (concurrency 1); latency of each, appended to `result`."""
    for call in calls:
        started = time.perf_counter()
        try:
            with anyio.fail_after(CALL_TIMEOUT_S):
                await perform(call)
        except CallFailed as exc:  # answered, but not with success: counted
            result.errors += 1
            result.first_error = result.first_error or str(exc)
            continue
        elapsed = time.perf_counter() - started
        result.seconds.append(elapsed)
        result.by_kind.setdefault(call.kind, []).append(elapsed)


@dataclass
class Throughput:
    workers: int
    calls: int
    errors: int
    seconds: float
    server_cpu_s: float | None
    double_cpu_s: float
    client_cpu_s: float
    nextcloud_requests: int
    nextcloud_new_connections: int
    first_error: str | None

    @classmethod
    def merged(cls, runs: Sequence[Throughput]) -> Throughput:
        """Several windows of the same target and concurrency, as one."""
        server = [r.server_cpu_s for r in runs]
        return cls(
            runs[0].workers,
            sum(r.calls for r in runs),
            sum(r.errors for r in runs),
            sum(r.seconds for r in runs),
            None if any(x is None for x in server) else sum(x or 0.0 for x in server),
            sum(r.double_cpu_s for r in runs),
            sum(r.client_cpu_s for r in runs),
            sum(r.nextcloud_requests for r in runs),
            sum(r.nextcloud_new_connections for r in runs),
            next((r.first_error for r in runs if r.first_error), None),
        )

    @property
    def per_s(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        per_call = max(self.calls, 1)
        cpu_s = (self.server_cpu_s or 0.0) + self.double_cpu_s + self.client_cpu_s
        return {
            "workers": self.workers,
            "calls": self.calls,
            "errors": self.errors,
            "seconds": self.seconds,
            "calls_per_s": self.per_s,
            "nextcloud_requests_per_call": self.nextcloud_requests / per_call,
            "nextcloud_new_connections": self.nextcloud_new_connections,
            "first_error": self.first_error,
            # What the machine's cores allow when every call costs this much CPU (all processes).
            "cpu_ceiling_calls_per_s": (os.cpu_count() or 1) * self.calls / cpu_s if cpu_s else None,
            "cpu_ms_per_call": {
                "server": None if self.server_cpu_s is None else self.server_cpu_s * 1000 / per_call,
                "double": self.double_cpu_s * 1000 / per_call,
                "client": self.client_cpu_s * 1000 / per_call,
            },
        }


async def throughput(
    target: Target,
    workers: int,
    calls_for: Callable[[int], Sequence[Call]],
    *,
    duration: float,
    double: Any,
    warmup: int = 3,
    open_timeout: float = 120.0,
    on_start: Callable[[], None] | None = None,
) -> Throughput:
    """`workers` concurrent sessions (one each), each looping over its calls until `duration` has
    passed (the call in flight finishes). Sessions are opened and warmed up before the clock starts
    and closed after it stops. Returns successful calls, errors, CPU used meanwhile, and what
    reached the double (a `_double.Double`)."""
    counts = {"ok": 0, "errors": 0, "open": 0, "done": 0}
    first_error: list[str] = []
    all_open, go, all_done = anyio.Event(), anyio.Event(), anyio.Event()
    clock: dict[str, float] = {}

    async def worker(index: int) -> None:
        calls = calls_for(index)
        async with AsyncExitStack() as stack:
            perform = await target.open(stack)
            for call in calls[:warmup]:
                with anyio.fail_after(CALL_TIMEOUT_S), contextlib.suppress(CallFailed):
                    await perform(call)
            counts["open"] += 1
            if counts["open"] == workers:
                all_open.set()
            await go.wait()
            i = warmup
            try:
                while time.perf_counter() < clock["deadline"]:
                    try:
                        with anyio.fail_after(CALL_TIMEOUT_S):
                            await perform(calls[i % len(calls)])
                        counts["ok"] += 1
                    except Exception as exc:  # counted, not fatal: a broken call must not end the run
                        counts["errors"] += 1
                        if not first_error:
                            first_error.append(f"{type(exc).__name__}: {exc}"[:300])
                    i += 1
            finally:
                counts["done"] += 1
                if counts["done"] == workers:
                    clock["end"] = time.perf_counter()
                    all_done.set()
            await all_done.wait()  # keep the session until everyone is done: closing is not measured

    async with anyio.create_task_group() as group:
        for index in range(workers):
            group.start_soon(worker, index)
        with anyio.fail_after(open_timeout):
            await all_open.wait()
        if on_start is not None:
            on_start()
        cpu_before, stats_before = _cpu(target.pid, double.pid), double.stats()
        clock["start"] = time.perf_counter()
        clock["deadline"] = clock["start"] + duration
        go.set()
        with anyio.fail_after(duration + CALL_TIMEOUT_S + 10):
            await all_done.wait()
        cpu_after, stats = _cpu(target.pid, double.pid), double.stats().minus(stats_before)
    server_cpu = None if target.pid is None else cpu_after[0] - cpu_before[0]
    return Throughput(
        workers,
        counts["ok"],
        counts["errors"],
        clock["end"] - clock["start"],
        server_cpu,
        cpu_after[1] - cpu_before[1],
        cpu_after[2] - cpu_before[2],
        stats.count,
        stats.connections,
        first_error[0] if first_error else None,
    )


def _cpu(server_pid: int | None, double_pid: int) -> tuple[float, float, float]:
    server = cpu_seconds(server_pid) if server_pid is not None else 0.0
    return server, cpu_seconds(double_pid), time.process_time()


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]
