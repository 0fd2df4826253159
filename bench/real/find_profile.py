"""Where the time of a warm `nc_find` goes, and two checkouts side by side (issue 41, ADR 0095).

    .venv/bin/python bench/real/find_profile.py [--every 4] [--mode both] [--code DIR ...]

On the find benchmark's seeded Nextcloud 34 (find_seed.py; run `make bench-real-find` once
first: its words index is reused) with the shipped model: the index is embedded once and kept
beside the instance (`find-34-profile`). Then one server per checkout (`--code`: the directory of
another checkout, run with this one's packages through PYTHONPATH; `.` is this one), each on its
own copy of that index, started with timers around the parts of a call (find_timed_server.py),
and every `--every`-th labelled query asked of each in turn (interleaved: the machine's load
falls on both alike). Prints per checkout the calls' p50/p95 over MCP, the recall (the same in
every checkout when only speed changed), and each part's median per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

import find_data  # noqa: E402
from _procs import clean_env  # noqa: E402
from find_measure import USER, call_find, first_index  # noqa: E402
from find_report import Labels, scores  # noqa: E402
from find_seed import FindInstance, ensure_find_seeded  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from meter import Meter  # noqa: E402

from tests.mcp_clients import stdio_session  # noqa: E402

PARTS = (
    "consent",
    "round",
    "words search",
    "meaning (all)",
    "embed question",
    "change mark",
    "read vectors",
    "build matrix",
    "score",
    "confirm",
    "confirm: SEARCH",
    "confirm: other kinds' listings",
    "confirm: notes by id",
    "confirm: folders listed",
    "status",
)


def _env(url: str, password: str, store: Path, extra: dict[str, str]) -> dict[str, str]:
    return clean_env(
        {
            "NEXTCLOUD_HOST": url,
            "NEXTCLOUD_USERNAME": USER,
            "NEXTCLOUD_PASSWORD": password,
            "NEXTCLOUD_MCP_TOOLSETS": "default,find",
            "LOG_LEVEL": "WARNING",
            "FIND_SYNC_SECONDS": "120",
            "FIND_MEANING": "shipped",
            "STORE_PATH": str(store / "store.sqlite3"),
            **extra,
        }
    )


async def _embedded(instance_dir: Path, url: str, password: str, log: Any) -> Path:
    """The words index of the last `bench-real-find`, embedded with the shipped model (once)."""
    kept = instance_dir.parent / f"{instance_dir.name}-profile"
    if (kept / "done").exists():
        return kept
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(instance_dir.parent / f"{instance_dir.name}-index" / "words", kept)
    async with stdio_session(_env(url, password, kept, {}), cwd=kept, errlog=log) as session:
        done = await first_index(session, Meter(instance_dir), "both")
    print(f"[profile] embedded: {done}", flush=True)
    (kept / "done").write_text(json.dumps(done))
    return kept


@asynccontextmanager
async def _timed_session(code: Path, env: dict[str, str], cwd: Path, log: Any) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "find_timed_server.py")],
        env={**env, "PYTHONPATH": str(code.resolve())},
        cwd=cwd,
    )
    async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _calls(lines: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Per call: each part's seconds summed, and `call` from its beginning to its status's end."""
    calls: list[dict[str, float]] = []
    began = 0.0
    for line in sorted(lines, key=lambda x: x["start"]):
        if line["part"] == "begin":
            began = line["start"]
            calls.append(defaultdict(float))
            continue
        if not calls:
            continue
        calls[-1][line["part"]] += line["seconds"]
        if line["part"] == "status":
            calls[-1]["call"] = line["start"] + line["seconds"] - began
    return calls


def _ms(values: list[float]) -> str:
    if not values:
        return "      -"
    return f"{1000 * statistics.median(values):7.1f}"


async def run(args: argparse.Namespace) -> None:
    instance = ensure_find_seeded("34")
    cfg = instance.config
    url, password = cfg["url"], cfg["alice"]["app_password"]
    labels = Labels()
    exact = json.loads(find_data.QUERIES.read_text())[:: args.every]
    paraphrase = find_data.paraphrase_queries()[:: args.every]
    queries = [("exact", q) for q in exact] + [("other words", q) for q in paraphrase]
    async with AsyncExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-find-profile-")))
        log = stack.enter_context(open(instance.dir.parent / f"{instance.dir.name}-profile.log", "w"))  # noqa: SIM115
        index = await _embedded(instance.dir, url, password, log)
        sessions: list[ClientSession] = []
        logs: list[Path] = []
        for n, code in enumerate(args.code):
            store = work / f"server-{n}"
            shutil.copytree(index, store)
            logs.append(work / f"parts-{n}.jsonl")
            extra = {"FIND_PROFILE_LOG": str(logs[-1]), **dict(x.split("=", 1) for x in args.set)}
            env = _env(url, password, store, extra)
            sessions.append(await stack.enter_async_context(_timed_session(Path(code), env, store, log)))
        for session in sessions:  # warm: the model loaded, a first answer given
            for _ in range(3):
                await call_find(session, "boiler warranty", mode=args.mode)
        for path in logs:
            path.write_text("")
        times: list[list[float]] = [[] for _ in sessions]
        recalls: list[dict[str, list[float]]] = [defaultdict(list) for _ in sessions]
        for kind, q in queries:
            for n, session in enumerate(sessions):
                started = time.perf_counter()
                answer = await call_find(session, q["q"], mode=args.mode, limit=10)
                times[n].append(time.perf_counter() - started)
                r, _ = scores([labels.of_hit(h) for h in answer["hits"]], set(q["relevant"]))
                recalls[n][kind].append(r)
        print(f"\nmode {args.mode}, {len(queries)} queries (every {args.every}th), each checkout in turn")
        for n, code in enumerate(args.code):
            cuts = statistics.quantiles(times[n], n=20, method="inclusive")
            recall = ", ".join(f"{k} {statistics.fmean(v):.3f}" for k, v in recalls[n].items())
            p50, p95 = 1000 * statistics.median(times[n]), 1000 * cuts[18]
            print(f"\n{code}: over MCP p50 {p50:.1f} ms, p95 {p95:.1f} ms; recall@10 {recall}")
            calls = _calls([json.loads(line) for line in logs[n].read_text().splitlines() if line])
            print(f"  {'part (median per call, ms)':32}")
            print(f"  {'the tool, in the server':32} {_ms([c['call'] for c in calls if 'call' in c])}")
            for part in PARTS:
                times_of = [c[part] for c in calls if part in c]
                print(f"  {part:32} {_ms(times_of)}  in {len(times_of)} of {len(calls)} calls")
            server = [c["call"] for c in calls if "call" in c]
            if len(server) == len(times[n]):
                overhead = [t - s for t, s in zip(times[n], server, strict=True)]
                print(f"  {'MCP and the rest (client)':32} {_ms(overhead)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=4, help="every Nth labelled query")
    parser.add_argument("--mode", default="both", choices=("words", "meaning", "both"))
    parser.add_argument("--code", nargs="+", default=["."], help="checkouts to run (their directories)")
    parser.add_argument("--set", nargs="*", default=[], help="settings for every server, NAME=value")
    parser.add_argument("--keep-running", action="store_true", help="leave the instance running when done")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    finally:
        if not args.keep_running:
            FindInstance("34").stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
