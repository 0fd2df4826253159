"""Finding by meaning, measured (docs/ADR/0078): recall@10 and MRR of words only, meaning only and
both, on labelled queries that share no word with their answers (`paraphrase`) and on queries
that use the answers' words (`exact`); query latency; the time to embed the corpus; the memory the
shipped model adds. Run with the shipped model and with an OpenAI-compatible endpoint on loopback
serving the same model (which must give the same figures: it proves the endpoint path).

The data is in bench/find_meaning/ (corpus.json, queries.json); the engine is a real SQLite
file. Ranking does not depend on Nextcloud, so no Nextcloud is needed.

    .venv/bin/python bench/find_meaning.py [--endpoint] [--json bench/results/find_meaning.json]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.index.embedding import Embedder, EndpointModel, ShippedModel  # noqa: E402
from nextcloud_mcp_server.index.engine import Filters, Hit, Item  # noqa: E402
from nextcloud_mcp_server.index.fusion import hybrid  # noqa: E402
from nextcloud_mcp_server.index.meaning import Meaning  # noqa: E402
from nextcloud_mcp_server.index.query import QueryError, parse_query  # noqa: E402
from nextcloud_mcp_server.index.sqlite import SQLiteIndex  # noqa: E402
from nextcloud_mcp_server.index.sqlite_vectors import SQLiteVectors  # noqa: E402
from tests.embeddings_endpoint import serve_embeddings  # noqa: E402

DATA = ROOT / "bench" / "find_meaning"
USER = "bench-user"
DEPTH = 50  # each ranking is read this deep before fusing


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def scores(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    top = ranked[:10]
    recall = len(relevant & set(top)) / len(relevant)
    first = next((i for i, key in enumerate(ranked, start=1) if key in relevant), None)
    return recall, (1.0 / first if first else 0.0)


async def rank(index: SQLiteIndex, meaning: Meaning, mode: str, question: str) -> list[Hit]:
    try:
        words = await index.search(USER, parse_query(question), Filters(), limit=DEPTH)
    except QueryError:
        words = []
    if mode == "words":
        return words
    by_meaning = await meaning.nearest(USER, question, Filters(), limit=DEPTH)
    return by_meaning if mode == "meaning" else hybrid(words, by_meaning)[0]


async def measure(embedder: Embedder, label: str) -> dict[str, Any]:
    corpus = json.loads((DATA / "corpus.json").read_text())
    queries = json.loads((DATA / "queries.json").read_text())
    with tempfile.TemporaryDirectory() as folder:
        index = SQLiteIndex(Path(folder) / "find-index.sqlite3")
        await index.open()
        store = SQLiteVectors(index)
        await store.open()
        meaning = Meaning(embedder, store)
        items = [Item(d["kind"], d["id"], d["title"], "", 1.7e9, "v1", d["body"]) for d in corpus]
        await index.put(USER, items)
        before = rss_mb()
        started = time.perf_counter()
        while await meaning.catch_up(USER, max_items=10_000, seconds=3600):
            pass
        embed_seconds = time.perf_counter() - started
        after = rss_mb()
        result: dict[str, Any] = {
            "model": embedder.identity
            if label == "shipped"
            else f"endpoint serving {ShippedModel().identity}",
            "documents": len(corpus),
            "embed_seconds": round(embed_seconds, 2),
            # with the endpoint, its model is loaded in this same process: not the server's cost
            "rss_added_mb": round(after - before, 1) if label == "shipped" else None,
        }
        for kind in ("paraphrase", "exact"):
            for mode in ("words", "meaning", "both"):
                recalls, reciprocal, times = [], [], []
                for q in queries[kind]:
                    t = time.perf_counter()
                    hits = await rank(index, meaning, mode, q["q"])
                    times.append(time.perf_counter() - t)
                    r, m = scores([h.key for h in hits], set(q["relevant"]))
                    recalls.append(r)
                    reciprocal.append(m)
                cuts = statistics.quantiles(times, n=20, method="inclusive")  # every 5 %
                result[f"{kind}/{mode}"] = {
                    "queries": len(recalls),
                    "recall@10": round(statistics.fmean(recalls), 3),
                    "mrr": round(statistics.fmean(reciprocal), 3),
                    "p50_ms": round(1000 * statistics.median(times), 1),
                    "p95_ms": round(1000 * cuts[18], 1),
                }
        await index.close()
    return result


def show(result: dict[str, Any]) -> None:
    memory = "" if result["rss_added_mb"] is None else f", +{result['rss_added_mb']} MB resident"
    embedded = f"{result['documents']} documents embedded in {result['embed_seconds']} s"
    print(f"\n{result['model']}: {embedded}{memory}")
    print(f"{'queries':<12}{'mode':<9}{'n':>5}{'recall@10':>11}{'MRR':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for kind in ("paraphrase", "exact"):
        for mode in ("words", "meaning", "both"):
            row = result[f"{kind}/{mode}"]
            print(
                f"{kind:<12}{mode:<9}{row['queries']:>5}{row['recall@10']:>11.3f}{row['mrr']:>8.3f}"
                f"{row['p50_ms']:>9.1f}{row['p95_ms']:>9.1f}"
            )
    gain = result["paraphrase/both"]["recall@10"] - result["paraphrase/words"]["recall@10"]
    kept = result["exact/both"]["recall@10"] - result["exact/words"]["recall@10"]
    print(
        f"targets: paraphrase recall gain {gain:+.3f} (floor +0.25): {'met' if gain >= 0.25 else 'MISSED'}; "
        f"exact recall change {kept:+.3f} (floor 0): {'met' if kept >= 0 else 'MISSED'}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", action="store_true", help="also through an OpenAI-compatible endpoint")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    results = [await measure(ShippedModel(), "shipped")]
    show(results[0])
    if args.endpoint:
        async with serve_embeddings() as (url, _):
            endpoint = EndpointModel(url, "wordllama")
            try:
                results.append(await measure(endpoint, "endpoint"))
            finally:
                await endpoint.aclose()
        show(results[1])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
