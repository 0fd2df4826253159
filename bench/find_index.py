"""The find index's engines on their own (docs/ADR/0071): build time, size per 1,000 documents,
and query latency (p50/p95) for one user among several, on SQLite FTS5 and PostgreSQL.

Documents are synthetic (words drawn from a fixed vocabulary with a Zipf-like skew, about 2 KB
each); every query has known hits. This measures the engines, not Nextcloud or MCP.

    .venv/bin/python bench/find_index.py [--docs 5000] [--users 5] [--queries 300] [--engine sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.index.engine import Filters, FindIndex, Item  # noqa: E402
from nextcloud_mcp_server.index.postgres import PostgresIndex  # noqa: E402
from nextcloud_mcp_server.index.query import parse_query  # noqa: E402
from nextcloud_mcp_server.index.sqlite import SQLiteIndex  # noqa: E402
from tests.postgres import postgres_cluster  # noqa: E402

QUERIES = ["boiler", "warranty", "lease terms", '"lease terms"', "caf", "report -draft", "zanzibar", "mar"]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyzéü"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(size)]


def documents(rng: random.Random, words: list[str], count: int) -> list[Item]:
    special = ["boiler", "warranty", "lease", "terms", "café", "report", "draft", "zanzibar", "march"]
    items = []
    for i in range(count):
        body = [words[min(int(rng.paretovariate(1.1)) * 7 % len(words), len(words) - 1)] for _ in range(300)]
        body += rng.sample(special, 2)
        rng.shuffle(body)
        path = f"Folder{i % 50}/doc{i}.md"
        items.append(
            Item("file", path, f"doc{i}.md", path.rpartition("/")[0], float(i), f"e{i}", " ".join(body))
        )
    return items


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def measure(index: FindIndex, docs: int, users: int, queries: int) -> dict[str, float]:
    rng = random.Random(41)
    words = vocabulary(rng)
    await index.open()
    started = time.perf_counter()
    for user in range(users):
        items = documents(rng, words, docs)
        for start in range(0, len(items), 500):
            await index.put(f"user{user}", items[start : start + 500])
    build = time.perf_counter() - started
    timings = []
    for n in range(queries):
        query = parse_query(QUERIES[n % len(QUERIES)])
        began = time.perf_counter()
        await index.search("user0", query, Filters(), limit=10)
        timings.append((time.perf_counter() - began) * 1000)
    await index.close()
    return {
        "build_s": round(build, 2),
        "docs_per_s": round(docs * users / build),
        "query_p50_ms": round(statistics.median(timings), 2),
        "query_p95_ms": round(percentile(timings, 0.95), 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5000, help="documents per user")
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--engine", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    results = {}
    if args.engine in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "find-index.sqlite3"
            results["sqlite"] = await measure(SQLiteIndex(path), args.docs, args.users, args.queries)
            size = sum(p.stat().st_size for p in Path(folder).iterdir())
            results["sqlite"]["kb_per_1000_docs"] = round(size / 1024 / (args.docs * args.users / 1000))
    if args.engine in ("postgresql", "both"):
        with postgres_cluster() as cluster, cluster.database() as url:
            results["postgresql"] = await measure(PostgresIndex(url), args.docs, args.users, args.queries)
            import psycopg  # a bench's own look at the database's size

            with psycopg.connect(url) as db:
                row = db.execute("SELECT pg_total_relation_size('find_entries')").fetchone()
            size = int(row[0]) if row else 0
            results["postgresql"]["kb_per_1000_docs"] = round(size / 1024 / (args.docs * args.users / 1000))
    print(
        json.dumps(
            {"docs_per_user": args.docs, "users": args.users, "cpus": os.cpu_count(), **results}, indent=2
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
