"""Serve an ASGI app (the double, or the MCP server) with uvicorn on a free loopback port."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

__all__ = ["serve_in_thread"]


@contextmanager
def serve_in_thread(
    app: Any, *, lifespan: str = "on", timeout: float = 15.0, port: int = 0, **config: Any
) -> Iterator[str]:
    """Run `app` in a background thread; yield its base URL (https when `ssl_certfile` is given);
    stop it on exit."""
    server_config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan=lifespan,
        access_log=False,
        log_config=None,
        **config,
    )
    server = uvicorn.Server(server_config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        scheme = "https" if config.get("ssl_certfile") else "http"
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
