"""An OpenAI-compatible embeddings endpoint on loopback, answering with the shipped model (or
with what a test scripts), for the tests and `make bench-real`: it proves the endpoint path with
the same model the server ships."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from nextcloud_mcp_server.index.embedding import ShippedModel

__all__ = ["serve_embeddings"]

Script = Callable[[dict[str, Any]], web.Response | None]


@asynccontextmanager
async def serve_embeddings(script: Script | None = None) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """Yield the base URL (ending in /v1) and the list of request bodies received. `script` may
    answer a request itself (a fault); None lets the shipped model answer."""
    model = ShippedModel()
    received: list[dict[str, Any]] = []

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        received.append({"body": body, "authorization": request.headers.get("Authorization")})
        if script is not None and (scripted := script(body)) is not None:
            return scripted
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = await model.embed(texts)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        return web.json_response({"object": "list", "model": body.get("model"), "data": data})

    app = web.Application()
    app.router.add_post("/v1/embeddings", embeddings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", received
    finally:
        await runner.cleanup()
