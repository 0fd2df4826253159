"""Where the time of one `tools/call` goes (this server, streamable HTTP, against the double).

1. The double's socket: `python -m tests.nextcloud_double` binds a socket made with
   `socket.socket()` (protocol 0). asyncio only sets TCP_NODELAY on accepted sockets whose protocol
   is IPPROTO_TCP, so the double answers with Nagle's algorithm on: its response body waits for the
   client's delayed ACK (~40 ms) on every keep-alive request. Shown with a trivial uvicorn app,
   then with the real double (the unmodified module against bench/_double.py, which binds with
   IPPROTO_TCP): direct keep-alive requests and tools/call through this server.
2. Budget at concurrency 1, per tool: latency, time inside the double, CPU of server and client;
   and the SDK's own floor: `echo` on a bare MCPServer over streamable HTTP.
3./4. Sampling profiles (py-spy, if installed: `.venv/bin/pip install py-spy==0.4.3`) of the server, the
   double and this client during a run of the mix, at concurrency 1 and with 64 concurrent
   sessions, sampling threads that hold the GIL (Python work; time in syscalls and waiting for a
   CPU is left out). The process is paused for each sample: read without pausing (--nonblocking),
   py-spy 0.4.3 returned stale stacks that charged 38% of the server's samples to the SDK's result
   validation, which a timer around it put at 0.13 ms a call. Each sample is charged to the
   innermost frame of a named package (stdlib, anyio and h11 frames go to their caller); the
   shares are then applied to the process's measured CPU per call (user + system, /proc).

    .venv/bin/python bench/profile_call.py [--calls 150] [--seconds 8]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
import uvicorn
from _double import Double, running_double, seed_user
from _mcp import Call, Sequential, Server, call_mix, mcp_target, our_server, run, sequential
from _procs import ROOT, clean_env, cpu_seconds, free_port, spawn, write_result
from _spy_profiles import profiles
from starlette.responses import JSONResponse
from tool_calls import latency, note_ids

USER, APP_PASSWORD = "bench", "bench-app-password"
FOLDER = "bench"
KINDS = ("notes_list", "note_get", "webdav_list")


# --- 1. Nagle ------------------------------------------------------------------------------------


async def _tiny(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await JSONResponse({"ok": True})(scope, receive, send)


def _keepalive_median_ms(url: str, requests: int = 20) -> float:
    with httpx.Client(timeout=10) as client:
        client.get(url)
        timings = []
        for _ in range(requests):
            started = time.perf_counter()
            client.get(url)
            timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


@contextmanager
def _tiny_server(proto: int) -> Any:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(_tiny, lifespan="off", log_level="warning", log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)


def nagle_micro() -> dict[str, float]:
    out = {}
    for label, proto in (("socket.socket() (protocol 0)", 0), ("IPPROTO_TCP", socket.IPPROTO_TCP)):
        with _tiny_server(proto) as url:
            out[label] = _keepalive_median_ms(url)
    return out


async def _mix_median_ms(server: Server, calls: list[Call]) -> float:
    async with AsyncExitStack() as stack:
        perform = await mcp_target(server).open(stack)
        await sequential(perform, calls[:6], Sequential())
        result = Sequential()
        await sequential(perform, calls, result)
    if not result.seconds:
        raise RuntimeError(f"every call failed ({result.errors})")
    return statistics.median(result.seconds) * 1000


def nagle_double(work: Path, calls: int) -> dict[str, dict[str, float]]:
    """The same data behind the unmodified double module and behind bench/_double.py."""
    creds = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD}
    out: dict[str, dict[str, float]] = {}
    module = [sys.executable, "-m", "tests.nextcloud_double", "--data", str(work / "double"), "--port", "0"]
    module += ["--user", f"{USER}:{USER}-login-password:{APP_PASSWORD}"]
    env = clean_env({"PYTHONPATH": str(ROOT)})
    with spawn(module, env=env, log=work / "module.log", cwd=ROOT, ready_line=True) as double:
        url = double.ready["url"]
        ids = note_ids(url)
        with our_server(url, creds, work) as server:
            out["python -m tests.nextcloud_double"] = {
                "status_php_ms": _keepalive_median_ms(url + "/status.php"),
                "tools_call_ms": run(_mix_median_ms(server, call_mix(KINDS, ids, FOLDER, calls))),
            }
    with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as metered:
        ids = note_ids(metered.url)
        with our_server(metered.url, creds, work) as server:
            out["bench/_double.py (IPPROTO_TCP)"] = {
                "status_php_ms": _keepalive_median_ms(metered.url + "/status.php"),
                "tools_call_ms": run(_mix_median_ms(server, call_mix(KINDS, ids, FOLDER, calls))),
            }
    return out


# --- 2b. httpcore asks for sniffio on every lock and shield ----------------------------------------


def sniffio_probe(requests: int = 100) -> dict[str, Any]:
    """httpcore's `current_async_library()` runs `import sniffio` each time; without sniffio installed
    that is a failed import (a search of sys.path) each time. Its cost, and calls per request."""
    import importlib.util
    import timeit

    import httpcore._synchronization as sync

    if importlib.util.find_spec("sniffio") is not None:
        return {"sniffio_installed": True}  # a dependency now: nothing fails to import any more
    rounds = 500
    each_us = timeit.timeit(sync.current_async_library, number=rounds) / rounds * 1e6
    counted = {"n": 0}
    original = sync.current_async_library

    def counting() -> str:
        counted["n"] += 1
        return original()

    async def fetch(url: str) -> None:
        async with httpx.AsyncClient() as client:
            await client.get(url)  # connection opened outside the count
            counted["n"] = 0
            for _ in range(requests):
                await client.get(url)

    sync.current_async_library = counting  # type: ignore[assignment]
    try:
        with _tiny_server(socket.IPPROTO_TCP) as url:
            run(fetch(url))
    finally:
        sync.current_async_library = original  # type: ignore[assignment]
    return {
        "sniffio_installed": importlib.util.find_spec("sniffio") is not None,
        "current_async_library_us": each_us,
        "calls_per_request": counted["n"] / requests,
    }


# --- 2. budget -----------------------------------------------------------------------------------


@contextmanager
def bare_http(work: Path) -> Any:
    port = free_port()
    args = [sys.executable, str(ROOT / "bench" / "bare_server.py"), "--http", str(port)]
    with spawn(
        args, env=clean_env({}), log=work / "bare.log", cwd=work, ready_url=f"http://127.0.0.1:{port}/mcp"
    ) as p:
        yield Server("bare MCPServer echo", f"http://127.0.0.1:{port}/mcp", p.pid, work / "bare.log")


async def _echo_budget(server: Server, calls: int) -> dict[str, float]:
    echo = Call("echo", "echo", {"text": "hello"})
    async with AsyncExitStack() as stack:
        perform = await mcp_target(server).open(stack)
        await sequential(perform, [echo] * 10, Sequential())
        result = Sequential()
        cpu, client = cpu_seconds(server.pid), time.process_time()
        await sequential(perform, [echo] * calls, result)
        cpu, client = cpu_seconds(server.pid) - cpu, time.process_time() - client
    return {
        "median_ms": statistics.median(result.seconds) * 1000,
        "server_cpu_ms_per_call": cpu * 1000 / calls,
        "client_cpu_ms_per_call": client * 1000 / calls,
    }


def budget(double: Double, server: Server, ids: list[int], calls: int, work: Path) -> dict[str, Any]:
    from _mcp import direct_target

    out: dict[str, Any] = {}
    for kind in KINDS:
        targets = {"direct": direct_target(double.url, USER, APP_PASSWORD), "ours": mcp_target(server)}
        out[kind] = run(latency(targets, double, call_mix((kind,), ids, FOLDER, calls), rounds=2, warmup=6))
    with bare_http(work) as bare:
        out["sdk_echo"] = run(_echo_budget(bare, calls))
    return out


def measure(calls: int, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {"nagle_micro_ms": nagle_micro(), "httpcore_sniffio": sniffio_probe()}
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as tmp:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=50, files=50, folder=FOLDER)
        out["nagle_double"] = nagle_double(work, max(30, calls // 3))
        with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as double:
            ids = note_ids(double.url)
            creds = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD}
            with our_server(double.url, creds, work) as server:
                out["budget"] = budget(double, server, ids, calls, work)
                out["profiles"] = profiles(double, server, ids, seconds, work, kinds=KINDS, folder=FOLDER)
    return out


def report(result: dict[str, Any]) -> None:
    print("1. keep-alive request to a trivial uvicorn app, by how its listening socket was made (median ms):")
    for label, ms in result["nagle_micro_ms"].items():
        print(f"   {label:<34}{ms:>8.2f}")
    print(
        "   the double, same data (median ms):           GET /status.php direct    tools/call via this server"
    )
    for label, r in result["nagle_double"].items():
        print(f"   {label:<45}{r['status_php_ms']:>12.2f}{r['tools_call_ms']:>26.2f}")
    print("2. budget of one call at concurrency 1 (median ms; per-call means for the rest):")
    print(f"   {'tool':<14}{'direct':>8}{'via MCP':>9}{'in double':>11}{'server CPU':>12}{'client CPU':>12}")
    budget_ = result["budget"]
    for kind in KINDS:
        direct, ours = budget_[kind]["direct"], budget_[kind]["ours"]
        print(
            f"   {kind:<14}{direct['median_ms']:>8.2f}{ours['median_ms']:>9.2f}"
            f"{ours['double_ms_per_call']:>11.2f}{ours['server_cpu_ms_per_call']:>12.2f}"
            f"{ours['client_cpu_ms_per_call']:>12.2f}"
        )
    echo = budget_["sdk_echo"]
    print(
        f"   SDK floor, echo on a bare MCPServer: {echo['median_ms']:.2f} ms; server CPU "
        f"{echo['server_cpu_ms_per_call']:.2f} ms, client CPU {echo['client_cpu_ms_per_call']:.2f} ms "
        "per call"
    )
    probe = result["httpcore_sniffio"]
    if "current_async_library_us" in probe:
        print(
            f"   httpcore: current_async_library() {probe['current_async_library_us']:.1f} us per call, "
            f"{probe['calls_per_request']:.1f} calls per request; sniffio installed: "
            f"{probe['sniffio_installed']}"
        )
    else:
        print("   httpcore: sniffio is installed, so its per-request lookups succeed at once")
    prof = result["profiles"]
    if "skipped" in prof:
        print(f"3. sampling profiles skipped: {prof['skipped']}")
        return
    titles = {
        "concurrency_1": "3. CPU ms per call by package, concurrency 1",
        "sessions_64": "4. CPU ms per call by package, 64 concurrent sessions",
    }
    for key, title in titles.items():
        run_ = prof[key]
        print(
            f"{title} (py-spy at {prof['rate_hz']} Hz, GIL holders only; {run_['calls']} calls of the mix):"
        )
        for name in ("server", "double", "client"):
            p = run_.get(name, {})
            if "error" in p or not p.get("samples"):
                print(f"   {name}: no profile ({p.get('error', 'no samples')})")
                continue
            kernel = p.get("system_cpu_ms_per_call")
            kernel_text = f" ({kernel:.2f} in the kernel)" if kernel is not None else ""
            parts = ", ".join(f"{k} {v:.2f}" for k, v in list(p["ms_per_call_by_package"].items())[:7])
            print(f"   {name:<7}{p['cpu_ms_per_call']:>6.2f} ms{kernel_text}: {parts}")
            leaves = ", ".join(f"{k} {v * 100:.0f}%" for k, v in list(p["top_leaf_frames"].items())[:4])
            print(f"          hottest frames: {leaves}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=150, help="calls per tool for the budget")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of the profiled run")
    args = parser.parse_args()
    result = measure(args.calls, args.seconds)
    report(result)
    write_result("profile_call", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
