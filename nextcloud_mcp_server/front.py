"""The HTTP front: how long a client may take to send a request, how many connections are served,
and how big a request may be (docs/ADR/0020-limits-at-the-front.md).

uvicorn bounds the time *between* requests (keep-alive) but not the time a client takes to send
one: a connection that dribbles its headers (slowloris) or its body is held forever. `GuardedH11`
is uvicorn's h11 protocol with two deadlines added: the request line and headers must arrive
within MCP_HEADER_TIMEOUT_SECONDS of the connection opening (or of the previous response), and the
body within MCP_BODY_TIMEOUT_SECONDS of the headers. Past a deadline the connection is closed; an
application reading the body sees `http.disconnect`.

`BodyLimit` answers a request over MCP_MAX_REQUEST_BYTES with a 413 that says the limit and what
to do instead, before anything reads the body.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from nextcloud_mcp_server.config import Settings

__all__ = ["BodyLimit", "GuardedH11", "guarded_protocol", "too_large_message", "uvicorn_options"]

logger = logging.getLogger(__name__)


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol, with deadlines for receiving a request's headers and its body."""

    header_timeout: float = 10.0
    body_timeout: float = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str = ""

    def _arm(self, what: str, seconds: float) -> None:
        self._disarm()
        self._waiting_for = what
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._waiting_for = ""

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            logger.info("closed a connection that did not send its request %s in time", self._waiting_for)
            self.transport.close()

    def _track(self) -> None:
        """Arm the deadline that fits where the client is in sending its request."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._waiting_for != "headers":
                self._arm("headers", self.header_timeout)
        elif state is h11.SEND_BODY:
            if self._waiting_for != "body":
                self._arm("body", self.body_timeout)
        else:
            self._disarm()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("headers", self.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self._waiting_for == "" and self.conn.their_state is h11.IDLE:
            self._arm("headers", self.header_timeout)  # the next request on a kept-alive connection
        super().data_received(data)
        if not self.transport.is_closing():
            self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Between requests uvicorn's keep-alive timeout applies; ours starts with the next bytes.
        if self.conn.their_state is not h11.SEND_BODY:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(settings: Settings) -> type[GuardedH11]:
    """`GuardedH11` with the configured deadlines."""
    return type(
        "GuardedH11",
        (GuardedH11,),
        {
            "header_timeout": settings.mcp_header_timeout_seconds,
            "body_timeout": settings.mcp_body_timeout_seconds,
        },
    )


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.Config` that put the front's limits in place."""
    return {
        "http": guarded_protocol(settings),
        "limit_concurrency": settings.mcp_max_connections,
        "timeout_keep_alive": 5,
        "h11_max_incomplete_event_size": 16 * 1024,
    }


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"


def too_large_message(limit: int, size: int | None = None) -> str:
    got = f"This request is {_size(size)}; the" if size is not None else "The"
    return (
        f"{got} server accepts at most {_size(limit)} per request (MCP_MAX_REQUEST_BYTES). "
        "Send large content in parts (nc_notes_append_content for notes), or upload big files to "
        "Nextcloud directly (its web or desktop client) and then use nc_webdav_move_resource or "
        "nc_webdav_copy_resource; an administrator can raise MCP_MAX_REQUEST_BYTES."
    )


class BodyLimit:
    """413 with a useful message for a request body over the limit (declared or as it streams)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(int(declared), scope, receive, send)
            return
        seen = 0
        started = False
        over = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's own answer to a cut-off body is replaced below
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted, watched)
        if over and not started:
            await self._refuse(None, scope, receive, send)

    async def _refuse(self, size: int | None, scope: Scope, receive: Receive, send: Send) -> None:
        message = too_large_message(self.limit, size)
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
        await JSONResponse(body, status_code=413, headers={"Connection": "close"})(scope, receive, send)
