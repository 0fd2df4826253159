"""The HTTP front: how long a client may take to send a request, how many connections are served,
and how big a request may be (docs/ADR/0020-limits-at-the-front.md), on uvicorn's httptools
protocol and uvloop (docs/ADR/0028-httptools-and-uvloop.md).

uvicorn bounds the time *between* requests (keep-alive) but not the time a client takes to send
one: a connection that dribbles its headers (slowloris) or its body is held forever. `GuardedHttp`
is uvicorn's httptools protocol with two deadlines added: the request line and headers must arrive
within MCP_HEADER_TIMEOUT_SECONDS of the connection opening (or of the request's first byte), and
the body within MCP_BODY_TIMEOUT_SECONDS of the headers. Past a deadline the connection is
closed; an application reading the body sees `http.disconnect`. The request line and headers
together may not exceed MAX_HEADER_BYTES (llhttp itself sets no bound): over it the answer is 431
and the connection is closed.

`BodyLimit` answers a request over MCP_MAX_REQUEST_BYTES with a 413 that says the limit and what
to do instead, before anything reads the body.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "MAX_HEADER_BYTES",
    "BodyLimit",
    "GuardedHttp",
    "guarded_protocol",
    "too_large_message",
    "uvicorn_options",
]

logger = logging.getLogger(__name__)

MAX_HEADER_BYTES = 16 * 1024
"""Request line plus headers; an MCP request needs well under 2 KiB (a bearer token included)."""


class _HeadersTooLarge(Exception):
    pass


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol, with deadlines for receiving a request's headers and its body
    and a bound on the size of its headers."""

    header_timeout: float = 10.0
    body_timeout: float = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str = ""
        self._header_bytes = 0  # of the request being parsed, as the parser hands them over
        self._unparsed_bytes = 0  # received while its headers are incomplete (llhttp buffers them)
        self._headers_too_large = False

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

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > MAX_HEADER_BYTES:
            self._headers_too_large = True
            raise _HeadersTooLarge  # stops the parser; uvicorn answers through send_400_response

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("headers", self.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._waiting_for != "headers" or self.transport.is_closing():
            self._unparsed_bytes = 0
            return
        # One header line that never ends is kept whole by the parser before any callback sees it.
        self._unparsed_bytes += len(data)
        if self._unparsed_bytes > MAX_HEADER_BYTES:
            self._headers_too_large = True
            self.send_400_response("")

    # Parser callbacks (called from inside data_received)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_bytes = 0
        if self._waiting_for != "headers":
            self._arm("headers", self.header_timeout)  # the next request on a kept-alive connection

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._arm("body", self.body_timeout)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()  # until the next request's first byte, uvicorn's keep-alive timeout applies

    def send_400_response(self, msg: str) -> None:
        if not self._headers_too_large:
            super().send_400_response(msg)
            return
        logger.info("refused a request whose headers exceed %d bytes", MAX_HEADER_BYTES)
        body = f"Request line and headers exceed {MAX_HEADER_BYTES // 1024} KiB.".encode()
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + body
        )
        self.transport.close()


def guarded_protocol(settings: Settings) -> type[GuardedHttp]:
    """`GuardedHttp` with the configured deadlines."""
    return type(
        "GuardedHttp",
        (GuardedHttp,),
        {
            "header_timeout": settings.mcp_header_timeout_seconds,
            "body_timeout": settings.mcp_body_timeout_seconds,
        },
    )


def event_loop() -> str:
    """uvloop where it is installed (not on Windows), else asyncio's own loop."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.Config` that put the front's limits in place."""
    return {
        "http": guarded_protocol(settings),
        "loop": event_loop(),
        "limit_concurrency": settings.mcp_max_connections,
        # X-Forwarded-* are read by client_address.py only, from FORWARDED_ALLOW_IPS: uvicorn's
        # own handling would trust them from 127.0.0.1 (or its FORWARDED_ALLOW_IPS) by default
        "proxy_headers": False,
        "timeout_keep_alive": 5,
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
        declared = ascii_number(Headers(scope=scope).get("content-length"))
        if declared is not None and declared > self.limit:
            await self._refuse(declared, scope, receive, send)
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
