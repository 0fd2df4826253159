"""Serve an ASGI app (the double, or the MCP server) with uvicorn on a free loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

__all__ = ["serve_in_thread"]


class _PromptServer(uvicorn.Server):
    """uvicorn's server, stopped as soon as a test leaves it (ADR 0098).

    uvicorn's own main loop looks at `should_exit` every 0.1 s, and its shutdown sleeps 0.1 s
    before polling the open connections every 0.1 s: 0.15-0.3 s at the end of every test that
    serves something, about 130 worker seconds over the suite. Here the main loop waits on an
    event that `stop()` sets from the test's thread, and the shutdown takes uvicorn's steps in
    uvicorn's order (stop listening, ask every connection to close, wait for them and for the
    running tasks, bounded by `timeout_graceful_shutdown` when set, then the lifespan's
    shutdown), looking every millisecond instead of every 0.1 s. A connection or task that never
    ends still keeps the server from stopping, and `serve_in_thread` says so."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    def stop(self) -> None:
        """Ask the server to stop (from any thread)."""
        self.should_exit = True
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(stopping.set)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()

    async def main_loop(self) -> None:
        self._stopping = asyncio.Event()
        self._loop = asyncio.get_running_loop()  # after the event: `stop()` sees both or neither
        ticks = 0
        # uvicorn's tick refreshes the Date header every tenth tick (once a second) and says
        # whether to exit; a `stop()` before the loop was known is seen by the first tick
        while not await self.on_tick(ticks):
            ticks += 10
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 1.0)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            await asyncio.wait_for(self._until_idle(), timeout=self.config.timeout_graceful_shutdown)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _until_idle(self) -> None:
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            await asyncio.sleep(0.001)
        for server in self.servers:
            await server.wait_closed()


@contextmanager
def serve_in_thread(
    app: Any, *, lifespan: str = "on", timeout: float = 15.0, port: int = 0, **config: Any
) -> Iterator[str]:
    """Run `app` in a background thread; yield its base URL (https when `ssl_certfile` is given);
    stop it on exit, failing if it does not stop within `timeout` (a connection or a task of the
    app that never ends)."""
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
    server = _PromptServer(server_config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.ready.wait(0.005):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        scheme = "https" if config.get("ssl_certfile") else "http"
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.stop()
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError(f"the server on port {port} did not stop within {timeout:.0f} s")
