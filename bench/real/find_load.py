"""Embedding's effect on other calls (issue 42): while the server embeds the whole seeded corpus
in the background with the shipped model, how much slower are another session's ordinary calls?

    .venv/bin/python bench/real/find_load.py [--version 34] [--rounds 3]

Each round starts a server over streamable HTTP (single-user mode, loopback) on a fresh copy of
the find benchmark's words index (find_measure.py keeps it beside the instance: run that first),
with FIND_MEANING=shipped and the periodic background sync off, and opens two SDK sessions:
- the embedding one calls `nc_find` once; what its budget leaves is embedded in the background
  (the bench reads the index file to know when every item has vectors, and calls again when the
  background run ends with items left, as a person's next call would);
- the other one makes ordinary calls, round robin (a notes list, a folder list, `nc_find` by words,
  `nc_find_status`), back to back while the corpus is embedded, then as many again when idle.
Then a server with FIND_MEANING=off on another copy makes the same calls: its memory is the
server without the model. The single-user server serves one Nextcloud account, so the other
session is of the same account; what it shares with the embedding (the process, its event loop,
the GIL, the index's connection) is what another user's calls share in multi-user mode.

Prints p50/p95 of the other calls while embedding and idle, their ratio (the target: at most
1.2), the time to embed the whole corpus (at most 10 min) and the memory with the model loaded
(at most 150 MB above the server without it), with the load average beside each; writes
bench/results/bench_real_find_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

from _mcp import Server, our_server  # noqa: E402
from _procs import clean_env, cpu_seconds, free_port, percentile, rss_kib, spawn, write_result  # noqa: E402
from find_seed import FindInstance, ensure_find_seeded  # noqa: E402
from mcp import ClientSession  # noqa: E402

from tests.mcp_clients import http_session  # noqa: E402

USER = "alice"
# A word of the seed's exact-word set: nc_find by words answers from the index.
OTHER_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("nc_notes_list_notes", {}),
    ("nc_webdav_list_directory", {"path": "/"}),
    ("nc_find", {"query": "boiler warranty", "mode": "words", "limit": 10}),
    ("nc_find_status", {}),
)
TARGET_RATIO = 1.2
# The same server with the background run's rest taken out (docs/ADR/0091): what the rest buys,
# measured in alternate rounds of the same run.
UNPACED = (
    "import nextcloud_mcp_server.index.meaning as m; m.BACKGROUND_REST = 0.0; "
    "from nextcloud_mcp_server.cli import main; raise SystemExit(main())"
)
EMBED_DEADLINE_S = 900.0  # the target is 600 s; a run is stopped a while after it


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def progress(index: Path) -> tuple[int, int]:
    """(items with vectors, items) in the index file, read beside the server (WAL readers)."""
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=30) as db:
        items = db.execute("SELECT COUNT(*) FROM find_entries").fetchone()[0]
        try:
            done = db.execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT kind, key FROM find_passages)"
            ).fetchone()[0]
        except sqlite3.OperationalError:  # the table is made when the server opens the index
            done = 0
    return int(done), int(items)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    took = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{tool}: {str(result.content)[:300]}")
    return took


async def other_calls(
    session: ClientSession, out: list[tuple[str, float]], stop: asyncio.Event | int
) -> None:
    """Ordinary calls, round robin, until `stop` is set (or `stop` calls are made)."""
    n = 0
    while (stop.is_set() is False) if isinstance(stop, asyncio.Event) else n < stop:
        tool, arguments = OTHER_CALLS[n % len(OTHER_CALLS)]
        out.append((tool, await call(session, tool, arguments)))
        n += 1


async def embed_all(session: ClientSession, index: Path, done: asyncio.Event) -> dict[str, Any]:
    """nc_find once, then wait until every item has vectors; again when the background run ended
    with items left (no progress for 1.5 s: the window in which the other session's nc_find, of
    the same account, would embed the rest within its own call is kept short)."""
    started = time.perf_counter()
    calls, last, still = 0, -1, 0.0
    try:
        while time.perf_counter() - started < EMBED_DEADLINE_S:
            embedded, items = await asyncio.to_thread(progress, index)
            if items and embedded >= items:
                break
            if calls == 0 or still >= 1.5:
                await call(session, "nc_find", {"query": "xkaloren", "mode": "both", "limit": 10})
                calls, still = calls + 1, 0.0
            elif embedded == last:
                still += 0.25
            else:
                still = 0.0
            last = embedded
            await asyncio.sleep(0.25)
    finally:
        done.set()
    embedded, items = await asyncio.to_thread(progress, index)
    return {"wall_s": time.perf_counter() - started, "calls": calls, "embedded": embedded, "items": items}


def summary(timed: list[tuple[str, float]]) -> dict[str, Any]:
    seconds = [t for _, t in timed]
    per_tool = {
        tool: round(1000 * statistics.median([t for name, t in timed if name == tool]), 1)
        for tool, _ in OTHER_CALLS
        if any(name == tool for name, _ in timed)
    }
    return {
        "calls": len(seconds),
        "p50_ms": round(1000 * statistics.median(seconds), 1),
        "p95_ms": round(1000 * percentile(seconds, 0.95), 1),
        "median_per_tool_ms": per_tool,
    }


def _env(url: str, password: str, folder: Path, meaning: str) -> dict[str, str]:
    return {
        "NEXTCLOUD_USERNAME": USER,
        "NEXTCLOUD_PASSWORD": password,
        "NEXTCLOUD_MCP_TOOLSETS": "default,find",
        "FIND_MEANING": meaning,
        "FIND_BACKGROUND_SECONDS": "0",  # only the embedding runs in the background
        "STORE_PATH": str(folder / "store.sqlite3"),
    }


@contextmanager
def server(url: str, env: dict[str, str], work: Path, *, paced: bool) -> Iterator[Server]:
    if paced:
        with our_server(url, env, work) as shipped:
            yield shipped
        return
    port = free_port()
    args = [sys.executable, "-c", UNPACED, "run", "--transport", "http", "--port", str(port)]
    full = clean_env({"NEXTCLOUD_HOST": url, "LOG_LEVEL": "WARNING", **env})
    log = work / f"unpaced-{port}.log"
    with spawn(args, env=full, log=log, cwd=work, ready_url=f"http://127.0.0.1:{port}/health") as p:
        yield Server("unpaced", f"http://127.0.0.1:{port}/mcp", p.pid, log)


async def one_round(instance: FindInstance, words: Path, work: Path, n: int, paced: bool) -> dict[str, Any]:
    """The shipped server (`paced`), else the same without the background run's rest."""
    url, password = instance.config["url"], instance.config["alice"]["app_password"]
    out: dict[str, Any] = {"round": n, "variant": "paced" if paced else "unpaced"}
    folder = work / f"shipped-{n}"
    shutil.copytree(words, folder)
    index = folder / "find-index.sqlite3"
    with server(url, _env(url, password, folder, "shipped"), work, paced=paced) as running:
        async with http_session(running.url) as embedding, http_session(running.url) as other:
            for tool, arguments in OTHER_CALLS[:2] + OTHER_CALLS[3:]:  # warm, without nc_find (it embeds)
                await call(other, tool, arguments)
            out["rss_before_model_mb"] = rss_kib(running.pid) / 1024
            busy: list[tuple[str, float]] = []
            done = asyncio.Event()
            out["load_embedding"], cpu = load(), cpu_seconds(running.pid)
            embedded, _ = await asyncio.gather(
                embed_all(embedding, index, done), other_calls(other, busy, done)
            )
            out["embed"] = embedded | {"server_cpu_s": round(cpu_seconds(running.pid) - cpu, 1)}
            out["busy"] = summary(busy) | {"times_ms": [round(1000 * t, 1) for _, t in busy]}
            out["load_idle"] = load()
            idle: list[tuple[str, float]] = []
            await other_calls(other, idle, max(len(busy), 2 * len(OTHER_CALLS)))
            out["idle"] = summary(idle) | {"times_ms": [round(1000 * t, 1) for _, t in idle]}
            out["rss_with_model_mb"] = rss_kib(running.pid) / 1024
    if paced:  # the server without the model: its memory, and the same calls
        folder = work / f"off-{n}"
        shutil.copytree(words, folder)
        with our_server(url, _env(url, password, folder, "off"), work) as off:
            async with http_session(off.url) as other:
                plain: list[tuple[str, float]] = []
                await other_calls(other, plain, len(idle))
                out["off"] = summary(plain)
                out["rss_without_model_mb"] = rss_kib(off.pid) / 1024
    out["load_end"] = load()
    print(f"[find-load] round {n}: {_short(out)}", flush=True)
    return out


def _short(r: dict[str, Any]) -> str:
    e, b, i = r["embed"], r["busy"], r["idle"]
    return (
        f"embedded {e['embedded']}/{e['items']} in {e['wall_s']:.1f} s (server CPU {e['server_cpu_s']} s, "
        f"load {r['load_embedding']}); other calls busy p50/p95 {b['p50_ms']}/{b['p95_ms']} ms "
        f"({b['calls']}), idle {i['p50_ms']}/{i['p95_ms']} ms (load {r['load_idle']}); "
        f"RSS {r.get('rss_without_model_mb', float('nan')):.0f} MB off, {r['rss_with_model_mb']:.0f} MB "
        f"with the model ({r['variant']})"
    )


def _pooled(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    busy = [t / 1000 for r in rounds for t in r["busy"]["times_ms"]]
    idle = [t / 1000 for r in rounds for t in r["idle"]["times_ms"]]
    b50, b95 = statistics.median(busy), percentile(busy, 0.95)
    i50, i95 = statistics.median(idle), percentile(idle, 0.95)
    return {
        "busy_calls": len(busy),
        "idle_calls": len(idle),
        "busy_p50_ms": round(1000 * b50, 1),
        "busy_p95_ms": round(1000 * b95, 1),
        "idle_p50_ms": round(1000 * i50, 1),
        "idle_p95_ms": round(1000 * i95, 1),
        "ratio_p50": round(b50 / i50, 2),
        "ratio_p95": round(b95 / i95, 2),
        "embed_s": [round(r["embed"]["wall_s"], 1) for r in rounds],
    }


def report(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    rounds = results["rounds"]
    print(
        f"\n{'round':>5} {'variant':>8} {'embed s':>8} {'busy p50/p95 ms':>17} {'idle p50/p95 ms':>17}  load"
    )
    for r in rounds:
        b, i = r["busy"], r["idle"]
        print(
            f"{r['round']:>5} {r['variant']:>8} {r['embed']['wall_s']:>8.1f} {b['p50_ms']:>8.0f}/"
            f"{b['p95_ms']:<8.0f} {i['p50_ms']:>8.0f}/{i['p95_ms']:<8.0f}  "
            f"{r['load_embedding']} -> {r['load_end']}"
        )
    results["pooled"] = {}
    for variant in ("paced", "unpaced"):
        chosen = [r for r in rounds if r["variant"] == variant]
        if not chosen:
            continue
        p = results["pooled"][variant] = _pooled(chosen)
        print(
            f"{variant}: {p['busy_calls']} calls while embedding p50/p95 {p['busy_p50_ms']}/"
            f"{p['busy_p95_ms']} ms, {p['idle_calls']} idle {p['idle_p50_ms']}/{p['idle_p95_ms']} ms: "
            f"ratio {p['ratio_p50']} / {p['ratio_p95']}; embedding took {p['embed_s']} s"
        )
    p = results["pooled"]["paced"]
    paced = [r for r in rounds if r["variant"] == "paced"]
    worst_embed = max(r["embed"]["wall_s"] for r in paced)
    added = max(r["rss_with_model_mb"] - r["rss_without_model_mb"] for r in paced)
    without = max(r["rss_without_model_mb"] for r in paced)
    print(f"memory: {without:.0f} MB without the model, +{added:.0f} MB with it loaded (largest round)")
    lines = [
        (
            "other calls p50 while embedding <= 1.2x idle",
            p["ratio_p50"] <= TARGET_RATIO,
            f"{p['ratio_p50']}x",
        ),
        (
            "other calls p95 while embedding <= 1.2x idle",
            p["ratio_p95"] <= TARGET_RATIO,
            f"{p['ratio_p95']}x",
        ),
        ("embedding the whole seeded corpus <= 10 min", worst_embed <= 600, f"{worst_embed:.0f} s, slowest"),
        ("memory with the model <= 150 MB above without", added <= 150, f"+{added:.0f} MB, largest round"),
    ]
    for name, ok, detail in lines:
        print(f"{'PASS' if ok else 'MISS'}  {name}  ({detail})")
    return lines


async def run(instance: FindInstance, rounds: int) -> dict[str, Any]:
    words = instance.dir.parent / f"{instance.dir.name}-index" / "words"
    if not (words / "find-index.sqlite3").is_file():
        raise SystemExit(f"no words index in {words}: run `make bench-real-find` once first")
    results: dict[str, Any] = {"other_calls": [t for t, _ in OTHER_CALLS], "rounds": []}
    with tempfile.TemporaryDirectory(prefix="bench-find-load-") as tmp:
        for n in range(1, rounds + 1):
            # alternate rounds: the shipped (paced) server, then the same without the rest
            results["rounds"].append(await one_round(instance, words, Path(tmp), n, paced=n % 2 == 1))
            write_result("bench_real_find_load_partial", results)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument("--rounds", type=int, default=4, help="alternately paced and unpaced")
    parser.add_argument("--keep-running", action="store_true", help="leave the instance running when done")
    args = parser.parse_args()
    instance = ensure_find_seeded(args.version)
    before = load()
    try:
        results = asyncio.run(run(instance, args.rounds))
    finally:
        if not args.keep_running:
            instance.stop()
    lines = report(results)
    results["targets"] = [{"target": n, "pass": ok, "detail": d} for n, ok, d in lines]
    results["meta"] = {
        "version": instance.config["version"],
        "loadavg_before": before,
        "loadavg_after": load(),
    }
    print(f"load average before {before}, after {results['meta']['loadavg_after']}")
    print(f"written {write_result('bench_real_find_load', results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
