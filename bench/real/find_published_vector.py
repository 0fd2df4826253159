"""The PyPI package's own vector search (`nc_semantic_search`) on the find benchmark's queries,
where it can run here: its `semantic` extra installed (pinned by bench/published-constraints.txt),
Qdrant in local mode inside its process (`QDRANT_LOCATION=:memory:`, no Qdrant server), and its
dense embeddings from an OpenAI-compatible endpoint on loopback that serves the shipped model
(the same model and path as our endpoint row).

    .venv/bin/python bench/real/find_published_vector.py [--version 34] [--sample 4]

Its vector sync indexes notes and the files tagged `vector-index` (VECTOR_SYNC_TAG); the seed tags
none, so only notes can be found unless the files are tagged. Every document it indexes also gets
a BM25 sparse vector from fastembed's `Qdrant/bm25`, which fastembed fetches from Hugging Face
on first use. What happens is recorded, not assumed: the sync's progress is polled until it stops
moving (or a deadline), the errors of its log are kept, and the queries are asked only when it
indexed something. `make bench-real-find` runs it after the package's searches by words (find_published.py;
not with --skip-published).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

import find_data  # noqa: E402
from _mcp import published_env  # noqa: E402
from _procs import free_port, spawn  # noqa: E402
from aiohttp import web  # noqa: E402
from find_report import Labels, ranked_over  # noqa: E402
from find_seed import ensure_find_seeded  # noqa: E402
from published import ensure_installed  # noqa: E402

from nextcloud_mcp_server.index.embedding import MAX_BATCH, ShippedModel  # noqa: E402
from tests.mcp_clients import http_session  # noqa: E402

__all__ = ["published_vector_ranking"]

TOOL = "nc_semantic_search"
SYNC_DEADLINE_S = 600.0
STILL_S = 60.0  # no progress for this long: the sync has done what it will
EXTRAS = "semantic"


class _Labels(Protocol):
    by_name: dict[str, str]
    by_note_title: dict[str, str]


@asynccontextmanager
async def openai_endpoint() -> AsyncIterator[tuple[str, dict[str, int]]]:
    """`POST /v1/embeddings` as OpenAI answers it (any batch size, with `usage`), from the shipped
    model; yields the base URL ending in /v1 and the count of requests and texts it answered."""
    model = ShippedModel()
    served = {"requests": 0, "texts": 0}

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        served["requests"] += 1
        served["texts"] += len(texts)
        rows: list[list[float]] = []
        for i in range(0, len(texts), MAX_BATCH):
            rows += (await model.embed([str(t) for t in texts[i : i + MAX_BATCH]])).tolist()
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(rows)]
        tokens = sum(len(str(t).split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response({"object": "list", "model": body.get("model"), "data": data, "usage": usage})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/embeddings", embeddings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}/v1", served
    finally:
        await runner.cleanup()


def _errors(log: Path) -> list[str]:
    """The distinct error lines of the package's log (first 20), without their time stamps."""
    seen: list[str] = []
    for line in log.read_text(errors="replace").splitlines():
        if re.search(r"ERROR|Error|error:|Traceback|Exception", line):
            text = re.sub(r"^\S+ \S+ ", "", line.strip())[:300]
            if text not in seen:
                seen.append(text)
    return seen[:20]


def _hit_label(labels: _Labels, r: dict[str, Any]) -> str | None:
    if r.get("doc_type") == "note":
        return labels.by_note_title.get(str(r.get("title")))
    path = str(r.get("path") or r.get("file_path") or r.get("title") or "")
    return labels.by_name.get(path.rpartition("/")[2])


async def published_vector_ranking(
    url: str, password: str, work: Path, labels: _Labels, queries: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    script = ensure_installed(extras=EXTRAS)
    folder = work / "published-vector"
    folder.mkdir(exist_ok=True)
    out: dict[str, Any] = {"tool": TOOL, "reached": "installed with the semantic extra"}
    async with openai_endpoint() as (endpoint, served):
        env = published_env(url, "alice", password, folder) | {
            "ENABLE_SEMANTIC_SEARCH": "true",
            "QDRANT_LOCATION": ":memory:",
            "OPENAI_API_KEY": "bench-loopback",  # our endpoint asks for none
            "OPENAI_BASE_URL": endpoint,
            "OPENAI_EMBEDDING_MODEL": "wordllama",
            "VECTOR_SYNC_SCAN_INTERVAL": "30",
        }
        port = free_port()
        args = [
            str(script),
            "run",
            "--transport",
            "streamable-http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        log = folder / "published-vector.log"
        ready = f"http://127.0.0.1:{port}/health/live"
        # started and stopped in a thread: its start-up asks the endpoint, served by this loop
        stack = ExitStack()
        try:
            await asyncio.to_thread(
                stack.enter_context, spawn(args, env=env, log=log, cwd=folder, ready_url=ready, timeout=300)
            )
            out["reached"] = "server started with Qdrant in memory and the loopback endpoint"
            async with http_session(f"http://127.0.0.1:{port}/mcp") as session:
                out |= await _sync_and_rank(session, labels, queries)
        except Exception as exc:  # recorded with the log's errors: the report says how far it got
            out["error"] = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            await asyncio.to_thread(stack.close)
        out["log_errors"] = _errors(log) if log.exists() else []
        out["endpoint_served"] = dict(served)
    if "exact" not in out:  # why nothing was ranked, in the package's own words
        cause = next((e for e in out["log_errors"] if "Could not load model" in e), None)
        out["error"] = out.get("error") or (
            f"{out['reached']}: {cause}" if cause else f"{out['reached']} (log: {out['log_errors'][:1]})"
        )
    return out


async def _sync_and_rank(
    session: Any, labels: _Labels, queries: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    started, moved, last = time.monotonic(), time.monotonic(), None
    status: dict[str, Any] = {}
    while time.monotonic() - started < SYNC_DEADLINE_S:
        answer = await session.call_tool("nc_get_vector_sync_status", {})
        status = dict(answer.structured_content or {})
        now = (status.get("indexed_documents"), status.get("pending_count"))
        if now != last:
            last, moved = now, time.monotonic()
            print(f"[published-vector] {time.monotonic() - started:.0f} s: {status}", flush=True)
        if time.monotonic() - moved > STILL_S:
            break
        await asyncio.sleep(3.0)
    out["sync"] = {
        k: status.get(k) for k in ("indexed_documents", "indexed_chunks", "pending_count", "status")
    }
    out["sync"]["wall_s"] = round(time.monotonic() - started, 1)
    if not status.get("indexed_documents"):
        out["reached"] = "vector sync ran, indexed nothing"
        return out
    out["reached"] = "indexed, queried"

    async def rank(query: str) -> list[str | None]:
        answer = await session.call_tool(TOOL, {"query": query, "limit": 10, "granularity": "document"})
        return [_hit_label(labels, r) for r in (answer.structured_content or {}).get("results", [])][:10]

    for kind, items in queries.items():
        out[kind] = await ranked_over(items, rank)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument("--sample", type=int, default=4, help="every Nth labelled query")
    args = parser.parse_args()
    instance = ensure_find_seeded(args.version)
    exact = json.loads(find_data.QUERIES.read_text())[:: args.sample]
    queries = {"exact": exact, "paraphrase": find_data.paraphrase_queries()[:: args.sample]}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-published-vector-") as tmp:
            cfg = instance.config
            result = asyncio.run(
                published_vector_ranking(
                    cfg["url"], cfg["alice"]["app_password"], Path(tmp), Labels(), queries
                )
            )
    finally:
        instance.stop()
    print(json.dumps({k: v for k, v in result.items()}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
