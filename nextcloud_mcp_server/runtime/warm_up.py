"""What a new process's first call would otherwise pay, done once the MCP handshake is over
(stdio, single-user mode; docs/ADR/0090).

A host that starts the server per conversation spawns it, says `initialize`, lists tools and
then waits for its model, seconds at least, before the first `tools/call`. That call used to
import the HTTP stack (aiohttp alone, with the TLS contexts it makes at import, 0.2-0.6 s on a
busy machine) and its toolset's parsers (iCalendar, vCard), and ask Nextcloud who the user
is, all before its own first request. Right after the handshake (once its first request, most
often `tools/list`, was answered; docs/ADR/0093) this does the same in the background: the
imports in a worker thread (the event loop keeps answering), then the start-up check's
`cloud/user`, which is the discovery every tool shares (single-flight, docs/ADR/0069), so a first
call arriving meanwhile joins it rather than asking again. The listed tools, listed until then
from a generated file, are built in the same thread (docs/ADR/0093). Nothing here changes an
answer: the modules are the same modules, imported earlier; the discovery is the one the first
call would make; the tools are the ones a first call would build.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any

from mcp.server.context import CallNext, ServerRequestContext

__all__ = ["FIRST_CALL_MODULES", "WarmUp", "after_handshake", "modules_for"]

logger = logging.getLogger(__name__)

# Imported at a first call (measured with `bench/real/first_imports.py`), by what needs them.
FIRST_CALL_MODULES: dict[str, tuple[str, ...]] = {
    "": (  # every toolset: the pooled HTTP client and the Nextcloud client
        "aiohttp",
        "nextcloud_mcp_server.outbound.client",
        "nextcloud_mcp_server.nextcloud.http",
        "nextcloud_mcp_server.nextcloud.client",
    ),
    "calendar": (
        "nextcloud_mcp_server.nextcloud.dav.caldav",
        "nextcloud_mcp_server.nextcloud.dav.ical",
        "nextcloud_mcp_server.nextcloud.dav.ical_read",
        "nextcloud_mcp_server.nextcloud.dav.recurrence",
    ),
    "contacts": ("nextcloud_mcp_server.nextcloud.dav.carddav", "vobject"),
    "files": ("nextcloud_mcp_server.nextcloud.dav.webdav",),
    "notes": ("nextcloud_mcp_server.nextcloud.dav.webdav",),
}


def modules_for(toolsets: Collection[str]) -> list[str]:
    """The modules a first call of any of `toolsets` imports, each once, in a fixed order."""
    wanted = [*FIRST_CALL_MODULES[""]]
    for name in sorted(toolsets):
        wanted += [m for m in FIRST_CALL_MODULES.get(name, ()) if m not in wanted]
    return wanted


def _import(modules: Iterable[str], build: Callable[[], None] | None = None) -> None:
    """In a worker thread: import `modules`, then `build`."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # an optional parser not installed: its first call says so
            logger.debug("warm-up: %s not imported (%s)", name, exc)
    if build is not None:
        build()


class WarmUp:
    """Started once, after the first request after `initialize`; never waited for by a call (a
    call that needs a module being imported waits on Python's own import lock, as it would have
    imported it itself)."""

    def __init__(
        self, modules: list[str], check: Callable[[], None] | None, build: Callable[[], None] | None = None
    ) -> None:
        """`check`: begins the start-up check (its `cloud/user` is the discovery every tool
        shares), after the imports it needs. `build`: builds the listed tools (docs/ADR/0093), in
        the worker thread after the imports; a call arriving first builds its own tool."""
        self.modules = modules
        self._check = check
        self._build = build
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self._run(), name="nextcloud-mcp-warm-up")

    async def _run(self) -> None:
        try:
            await asyncio.to_thread(_import, self.modules, self._build)
        except Exception:  # a warm-up that failed leaves the work to the first call
            logger.debug("warm-up failed", exc_info=True)
        # what it imported and built lives as long as the process, as startup's does (frozen by
        # the CLI before serving): out of the collector's sight, or a first call's full
        # collections walk it (30 ms of a 5,000-note listing; docs/ADR/0113)
        gc.freeze()
        if self._check is not None:
            self._check()

    async def aclose(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


def after_handshake(warm: WarmUp) -> Any:
    """Server middleware: starts `warm` once the first request after `initialize` was answered
    (`tools/list`, as a host lists tools before its model can call one; or whatever a client
    asks first). Not at `notifications/initialized`: the warm-up's imports and builds would share
    the interpreter with that `tools/list` and slow its answer (docs/ADR/0093)."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if ctx.method != "initialize" and not ctx.method.startswith("notifications/"):
            warm.start()
        return result

    return middleware
