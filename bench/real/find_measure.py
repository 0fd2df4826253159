"""The find benchmark on the real Nextcloud (issues 41 and 42): `nc_find` over MCP on the seeded
documents (find_seed.py), beside the floor, Nextcloud's unified search and the PyPI package.

    .venv/bin/python bench/real/find_measure.py [--version 34] [--skip-published] [--quick]

1. The first full index, words only (FIND_MEANING=off, one call with a budget long enough to read
   everything): wall time, Nextcloud's requests and CPU, beside the floor (every indexed item read
   once: a PROPFIND per folder and a GET per file on one connection, one calendar REPORT); index
   size and the server's resident memory, per 1,000 items.
2. The shipped model (FIND_MEANING=shipped) on a copy of that index: the time to embed everything,
   the memory it adds; then every labelled query in words, meaning and both: recall@10, MRR, and
   p50/p95 of the warm calls (the default mode, both).
3. The same through an OpenAI-compatible endpoint on loopback serving the shipped model
   (tests/embeddings_endpoint.py): it proves the endpoint path.
4. Nextcloud's unified search (its files, notes and calendar providers, 10 each, interleaved) and
   the PyPI package's searches, on the same queries.
5. Background sync (find_fresh.py): how soon a change shows; an unchanged round's requests.

Prints the figures beside the targets and writes bench/results/bench_real_find.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

import find_data  # noqa: E402
from _procs import clean_env, write_result  # noqa: E402
from find_fresh import background  # noqa: E402
from find_process import rss_mb, server_pid  # noqa: E402
from find_published import published_ranking  # noqa: E402
from find_report import MODES, Labels, report, scores, summary  # noqa: E402
from find_seed import FindInstance, ensure_find_seeded  # noqa: E402
from find_unified import rank_unified  # noqa: E402
from mcp import ClientSession  # noqa: E402
from meter import Meter  # noqa: E402

from tests.embeddings_endpoint import serve_embeddings  # noqa: E402
from tests.mcp_clients import stdio_session  # noqa: E402

USER = "alice"


async def call_find(session: ClientSession, query: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool("nc_find", {"query": query, **arguments})
    if result.is_error:
        raise RuntimeError(f"nc_find {query!r}: {str(result.content)[:300]}")
    return dict(result.structured_content or {})


async def first_index(session: ClientSession, meter: Meter, mode: str) -> dict[str, Any]:
    """Calls until the index is complete (one call when the budget suffices): wall, requests, CPU."""
    started, calls, requests, cpu = time.perf_counter(), 0, 0, 0.0
    last, stalled = None, 0
    while True:
        meter.mark()
        answer = await call_find(session, "xkaloren", mode=mode)
        cost = meter.cost()
        calls, requests, cpu = calls + 1, requests + len(cost.requests), cpu + cost.cpu_s
        total = sum(answer["index"]["items"].values())
        embedded = answer["index"].get("by_meaning")
        # done when everything is read and, finding by meaning, embedded (the first call embeds
        # what its budget allows, the rest is embedded in the background: polled here)
        stalled = stalled + 1 if embedded == last else 0  # items without text are never embedded
        last = embedded
        if answer["index"]["complete"] and (mode == "words" or embedded >= total or stalled >= 5):
            break
        if calls >= 200:
            break
        if mode != "words":
            await asyncio.sleep(1.0)
    return {
        "wall_s": time.perf_counter() - started,
        "calls": calls,
        "requests": requests,
        "nc_cpu_s": cpu,
        "complete": answer["index"]["complete"],
        "items": answer["index"]["items"],
        "by_meaning": answer["index"].get("by_meaning"),
        "errors": answer["index"]["errors"],
    }


_TYPES = '<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>'


async def floor(client: httpx.AsyncClient, meter: Meter) -> dict[str, Any]:
    """Every indexed item read once, the cheapest way known: one connection, a Depth 1 PROPFIND
    per folder, a GET per file, one calendar REPORT of every object."""
    root = f"/remote.php/dav/files/{USER}"
    meter.mark()
    started = time.perf_counter()
    folders, files, body = [root + "/"], 0, 0
    while folders:
        folder = folders.pop()
        answer = await client.request("PROPFIND", folder, content=_TYPES, headers={"Depth": "1"})
        answer.raise_for_status()
        for href in re.findall(r"<d:href>([^<]+)</d:href>", answer.text):
            href = unquote(href)
            if href.rstrip("/") == folder.rstrip("/"):
                continue
            if href.endswith("/"):
                folders.append(href)
            else:
                got = await client.get(href)
                got.raise_for_status()
                files, body = files + 1, body + len(got.content)
    report = (
        '<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/>'
        '<c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"/></c:filter></c:calendar-query>'
    )
    cal = await client.request(
        "REPORT", f"/remote.php/dav/calendars/{USER}/personal/", content=report, headers={"Depth": "1"}
    )
    cal.raise_for_status()
    cost = meter.cost()
    return {
        "wall_s": time.perf_counter() - started,
        "files": files,
        "file_bytes": body,
        "requests": len(cost.requests),
        "nc_cpu_s": cost.cpu_s,
    }


async def rank_all(
    session: ClientSession, labels: Labels, queries: dict[str, list[dict[str, Any]]], modes: tuple[str, ...]
) -> dict[str, Any]:
    """recall@10 and MRR per query set and mode; the wall time of every call."""
    out: dict[str, Any] = {}
    for kind, items in queries.items():
        for mode in modes:
            recalls, reciprocal, times, rounds = [], [], [], 0
            for q in items:
                started = time.perf_counter()
                answer = await call_find(session, q["q"], mode=mode, limit=10)
                times.append(time.perf_counter() - started)
                rounds += answer["index"].get("synced_now", True)  # the call read Nextcloud first
                r, m = scores([labels.of_hit(h) for h in answer["hits"]], set(q["relevant"]))
                recalls.append(r)
                reciprocal.append(m)
            out[f"{kind}/{mode}"] = {**summary(recalls, reciprocal, times), "own_rounds": rounds}
            print(f"[find] {kind:10} {mode:8} {out[f'{kind}/{mode}']}", flush=True)
    return out


def index_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("find-index.sqlite3*"))


async def _endpoint(
    results: dict[str, Any],
    base: dict[str, str],
    work: Path,
    words_dir: Path,
    log: Any,
    meter: Meter,
    labels: Labels,
    queries: dict[str, list[dict[str, Any]]],
) -> None:
    endpoint_dir = work / "endpoint"
    shutil.copytree(words_dir, endpoint_dir)
    async with serve_embeddings() as (endpoint, _):
        env = clean_env(
            {
                **base,
                "FIND_MEANING": "endpoint",
                "FIND_EMBEDDINGS_URL": endpoint,
                "FIND_EMBEDDINGS_MODEL": "wordllama",
                "STORE_PATH": str(endpoint_dir / "store.sqlite3"),
            }
        )
        async with stdio_session(env, cwd=work, errlog=log) as session:
            results["embed_endpoint"] = await first_index(session, meter, "both")
            print(f"[find] embedded (endpoint): {results['embed_endpoint']}", flush=True)
            results["endpoint"] = await rank_all(session, labels, queries, ("meaning", "both"))


async def run(instance: FindInstance, args: argparse.Namespace) -> dict[str, Any]:
    cfg = instance.config
    url, password = cfg["url"], cfg["alice"]["app_password"]
    meter = Meter(instance.dir)
    labels = Labels()
    exact = json.loads(find_data.QUERIES.read_text())
    paraphrase = find_data.paraphrase_queries()
    every = 10 if args.quick else args.every
    exact, paraphrase = exact[::every], paraphrase[::every]
    queries = {"exact": exact, "paraphrase": paraphrase}
    results: dict[str, Any] = {"queries": {k: len(v) for k, v in queries.items()}, "every": every}
    base = {
        "NEXTCLOUD_HOST": url,
        "NEXTCLOUD_USERNAME": USER,
        "NEXTCLOUD_PASSWORD": password,
        "NEXTCLOUD_MCP_TOOLSETS": "default,find",
        "LOG_LEVEL": "WARNING",
        "FIND_SYNC_SECONDS": "120",  # the most allowed: the first index in as few calls as can be
    }
    async with AsyncExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-find-")))
        # kept after the run, beside the instance: what the servers said
        log_path = instance.dir.parent / f"{instance.dir.name}-servers.log"
        log = stack.enter_context(open(log_path, "w"))  # noqa: SIM115
        client = await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=url,
                auth=(USER, password),
                timeout=600,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                headers={"User-Agent": "bench-real-find-floor"},
            )
        )
        # 1. words only: the first full index beside the floor
        words_dir = work / "words"
        kept = instance.dir.parent / f"{instance.dir.name}-index"
        env = clean_env({**base, "FIND_MEANING": "off", "STORE_PATH": str(words_dir / "store.sqlite3")})
        if args.reuse_index:  # the index and first-index figures of an earlier run (not re-measured)
            shutil.copytree(kept / "words", words_dir)
            results.update(json.loads((kept / "first_index.json").read_text()))
        else:
            words_dir.mkdir()
            async with stdio_session(env, cwd=work, errlog=log) as session:
                await session.call_tool("nc_find_status", {})
                pid = server_pid()
                before = rss_mb(pid)
                results["first_index"] = await first_index(session, meter, "words")
                results["first_index"]["rss_before_mb"] = before
                results["first_index"]["rss_after_mb"] = rss_mb(pid)
                print(f"[find] first index (words): {results['first_index']}", flush=True)
            results["index_bytes_words"] = index_bytes(words_dir)
            results["floor"] = await floor(client, meter)
            print(f"[find] floor: {results['floor']}", flush=True)
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(words_dir, kept / "words")
            first = {k: results[k] for k in ("first_index", "index_bytes_words", "floor")}
            (kept / "first_index.json").write_text(json.dumps(first))
        async with stdio_session(env, cwd=work, errlog=log) as session:
            # warm, words only: p50/p95 without meaning
            await call_find(session, "xkaloren", mode="words")
            results["words_server"] = await rank_all(session, labels, queries, ("words",))
        write_result("bench_real_find_partial", results)
        # 2. the shipped model, on a copy of the words index
        shipped_dir = work / "shipped"
        shutil.copytree(words_dir, shipped_dir)
        env = clean_env({**base, "FIND_MEANING": "shipped", "STORE_PATH": str(shipped_dir / "store.sqlite3")})
        async with stdio_session(env, cwd=work, errlog=log) as session:
            await session.call_tool("nc_find_status", {})
            pid = server_pid()
            before = rss_mb(pid)
            results["embed_shipped"] = await first_index(session, meter, "both")
            results["embed_shipped"]["rss_before_mb"] = before
            results["embed_shipped"]["rss_after_mb"] = rss_mb(pid)
            print(f"[find] embedded (shipped): {results['embed_shipped']}", flush=True)
            results["shipped"] = await rank_all(session, labels, queries, MODES)
            results["rss_after_queries_mb"] = rss_mb(pid)
        results["index_bytes_shipped"] = index_bytes(shipped_dir)
        write_result("bench_real_find_partial", results)
        # 3. Nextcloud's unified search on every query
        try:
            if not args.skip_unified:
                results["unified"] = await rank_unified(client, labels, queries)
        except Exception as exc:  # recorded: the rest is still reported
            results["unified_error"] = f"{type(exc).__name__}: {exc}"[:500]
        write_result("bench_real_find_partial", results)
        # 4. the comparisons that prove a path (every `--sample`-th query): an OpenAI-compatible
        # endpoint serving the same model; the PyPI package
        sampled = {kind: items[:: args.sample] for kind, items in queries.items()}
        results["sample"] = args.sample
        if not args.skip_endpoint:
            try:
                await _endpoint(results, base, work, words_dir, log, meter, labels, sampled)
            except Exception as exc:  # recorded: the rest is still measured
                results["endpoint_error"] = f"{type(exc).__name__}: {exc}"[:500]
                print(f"[find] endpoint failed: {results['endpoint_error']}", flush=True)
            write_result("bench_real_find_partial", results)
        if not args.skip_published:
            try:
                results["published"] = await published_ranking(url, password, work, labels, sampled)
            except Exception as exc:  # recorded: the package is compared where it runs
                results["published"] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            print(f"[published] {results['published']}", flush=True)
        # 5. last (it adds items): a change seen in background mode; an unchanged round's cost
        if not args.skip_background:
            shutil.copytree(words_dir, work / "fresh")
            results["background"] = await background(base, work / "fresh", work, log, meter, client)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument("--quick", action="store_true", help="a tenth of the queries: a smoke run")
    parser.add_argument("--skip-published", action="store_true", help="without the PyPI package")
    parser.add_argument(
        "--skip-unified", action="store_true", help="without Nextcloud's unified search (about 6 s a query)"
    )
    parser.add_argument("--skip-endpoint", action="store_true", help="without the loopback endpoint")
    parser.add_argument("--skip-background", action="store_true", help="without background sync (5.)")
    parser.add_argument(
        "--every", type=int, default=1, help="every Nth labelled query (each call costs a sync round)"
    )
    parser.add_argument(
        "--sample", type=int, default=4, help="the endpoint and the PyPI package: every Nth query (default 4)"
    )
    parser.add_argument(
        "--reuse-index", action="store_true", help="the words index and first-index figures of the last run"
    )
    parser.add_argument(
        "--instance-dir",
        type=Path,
        help="another instance's directory (a copy of find-<version> with its paths changed): runs "
        "beside one that is busy; its index is kept beside it as <dir>-index",
    )
    parser.add_argument("--keep-running", action="store_true", help="leave the instance running when done")
    parser.add_argument(
        "--report", type=Path, help="print the report of a results file again, measure nothing"
    )
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.report.read_text()), FindInstance(args.version).manifest)
        return 0
    instance = ensure_find_seeded(args.version, directory=args.instance_dir)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    try:
        results = asyncio.run(run(instance, args))
    finally:
        if not args.keep_running:
            instance.stop()
    write_result("bench_real_find_partial", results)
    lines = report(results, instance.manifest)
    results["targets"] = [{"target": n, "pass": ok, "detail": d} for n, ok, d in lines]
    results["meta"] = {
        "version": instance.config["version"],
        "quick": args.quick,
        "loadavg_before": load_before,
        "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
        "seed": {k: v for k, v in instance.manifest.items() if k != "note_ids"},
    }
    print(
        f"\nload average before {' '.join(load_before)}, after {' '.join(results['meta']['loadavg_after'])}"
    )
    print(f"written {write_result('bench_real_find', results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
