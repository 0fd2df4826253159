"""`nc_find` over MCP against the metered double (docs/ADR/0071, 0072): the first call (which
indexes), then warm calls: latency p50/p95 and the Nextcloud requests each call makes.

    .venv/bin/python bench/find_calls.py [--notes 1000] [--files 1000] [--calls 50]

The double is not the real Nextcloud (its listings are faster, its folder ETags its own): these
figures are this server's share; `make bench-real` is where the issue's targets are judged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _double import running_double, seed_user  # noqa: E402
from _mcp import our_server  # noqa: E402

from tests.mcp_clients import http_session, structured  # noqa: E402

QUERIES = ["benchmark", "note 7", '"typical short"', "file -note", "words item"]


async def measure(url: str, calls: int, double_stats: object) -> dict[str, object]:
    async with http_session(url) as session:
        began = time.perf_counter()
        first = structured(await session.call_tool("nc_find", {"query": "benchmark"}))
        first_s = time.perf_counter() - began
        rounds = 0
        while not first["index"]["complete"] and rounds < 50:  # the index completes over calls
            first = structured(await session.call_tool("nc_find", {"query": "benchmark"}))
            rounds += 1
        full_s = time.perf_counter() - began
        before = double_stats.stats()  # type: ignore[attr-defined]
        timings = []
        for n in range(calls):
            began = time.perf_counter()
            structured(await session.call_tool("nc_find", {"query": QUERIES[n % len(QUERIES)]}))
            timings.append((time.perf_counter() - began) * 1000)
        spent = double_stats.stats().minus(before)  # type: ignore[attr-defined]
    ordered = sorted(timings)
    return {
        "first_call_s": round(first_s, 2),
        "full_index_s": round(full_s, 2),
        "calls_to_complete": rounds + 1,
        "items": first["index"]["items"],
        "warm_p50_ms": round(statistics.median(timings), 1),
        "warm_p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
        "nextcloud_requests_per_call": round(spent.count / calls, 2),
        "request_kinds": spent.kinds,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        seed_user(data / "nextcloud", "admin", notes=args.notes, files=args.files)
        with running_double(data / "nextcloud", [("admin", "admin-app-password")]) as double:
            env = {
                "NEXTCLOUD_USERNAME": "admin",
                "NEXTCLOUD_PASSWORD": "admin-app-password",
                "NEXTCLOUD_MCP_TOOLSETS": "default,find",
                "FIND_INDEX_PATH": str(data / "find-index.sqlite3"),
                "FIND_SYNC_SECONDS": "20",
            }
            with our_server(double.url, env, data) as server:
                result = asyncio.run(measure(server.url, args.calls, double))
    print(json.dumps({"notes": args.notes, "files": args.files, **result}, indent=2))


if __name__ == "__main__":
    main()
