"""The HTTP/1.1 transport under the Nextcloud client: asyncio and llhttp
(docs/ADR/0030-own-http11-transport.md).

httpx2 stays the client (requests, responses, redirects off, the bounds of `http_bounds`); this
replaces only what sends a request and reads its answer (the connection itself is
`http11_connection.Connection`). httpcore2's pool, h11 and anyio under httpx2 cost about 0.95 ms
of CPU per Nextcloud request on a busy machine; with this transport the whole request costs
0.5-0.6 ms, because the protocol work is done by llhttp (httptools, already here for uvicorn)
inside one asyncio `Protocol` per connection.

- A pool per origin (scheme, host, port) of kept-alive connections, at most `max_connections`
  open at once; an idle connection is reused while younger than `keepalive_expiry`, and dropped
  when the server closed it, answered without keep-alive, or sent bytes nobody asked for.
- Timeouts from the request (httpx2's `timeout` extension): connect (TLS included), pool, write
  and read (each wait for more of the answer); and the overall deadline that `BoundedTransport`
  hands over (`honours_deadline`), on the same waits. A wait is one timer on the event loop, not
  an `asyncio.timeout` (which costs a task lookup, a cancellation and its bookkeeping).
- Reading is flow-controlled: past `HIGH_WATER` bytes not yet taken by the reader, the socket
  is paused, so a large file costs a bounded buffer, not its size.
- A response not read to its end (or a cancelled request) closes its connection: it never goes
  back to the pool with a half-read answer.
- Errors are httpx2's own (`ConnectError`, `ReadTimeout`, `RemoteProtocolError`, ...), with the
  socket or TLS error as their cause, so callers map them as before.

Requests go one at a time per connection (no pipelining), HTTP/1.1 only (Nextcloud speaks it
everywhere; h2 was never enabled), no `Upgrade`. Proxies from the environment are httpx2's
business: it mounts its own transport for them.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import AsyncIterator

import httpx2

from nextcloud_mcp_server.nextcloud.http11_connection import Connection, Limits

__all__ = ["Http11Transport"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_Origin = tuple[str, str, int]  # scheme, host, port
# What RFC 9110 allows in a method or header name (a token), and what a header value must never
# hold: a line break or NUL would end the header early and start another one (h11 checked this
# under httpcore2; httpx2 itself does not).
_NOT_TOKEN = re.compile(rb"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")
_BREAKS_LINE = re.compile(rb"[\r\n\x00]")


def _head(request: httpx2.Request) -> bytes:
    """The request line and headers, or `LocalProtocolError` for a method or header that could
    split the request (no connection is taken for such a request)."""
    target = request.url.raw_path  # httpx2 refuses control characters in URLs
    method = request.method.encode("ascii")
    if not method or _NOT_TOKEN.search(method):
        raise httpx2.LocalProtocolError(f"{request.method!r} is not an HTTP method")
    lines = [method, b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if not name or _NOT_TOKEN.search(name) or _BREAKS_LINE.search(value):
            shown = name.decode("ascii", "replace")
            raise httpx2.LocalProtocolError(f"the header {shown!r} holds a line break or NUL; not sent")
        lines += [name, b": ", value, b"\r\n"]
    lines.append(b"\r\n")
    return b"".join(lines)


class _Body(httpx2.AsyncByteStream):
    """A response body as it comes off the connection; its end (or `aclose`) frees the connection."""

    def __init__(self, pool: Http11Transport, origin: _Origin, conn: Connection) -> None:
        self._pool = pool
        self._origin = origin
        self._conn: Connection | None = conn

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        try:
            while (chunk := await conn.next_chunk()) is not None:
                yield chunk
        except BaseException:
            self._release(reuse=False)
            raise
        self._release(reuse=True)

    async def aclose(self) -> None:
        # Not read to its end: what is left of the answer would be read as the next one's start.
        self._release(reuse=False)

    def _release(self, *, reuse: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool._release(self._origin, conn, reuse=reuse and conn.keep_alive())


class Http11Transport(httpx2.AsyncBaseTransport):
    """httpx2 transport: HTTP/1.1 over asyncio with llhttp, pooled per origin."""

    honours_deadline = True  # `BoundedTransport` hands its overall deadline over (DEADLINE_AT)

    def __init__(
        self,
        *,
        verify: bool | ssl.SSLContext = True,
        max_connections: int = 32,
        keepalive_expiry: float = 30.0,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._verify = verify
        self._ssl_context = verify if isinstance(verify, ssl.SSLContext) else None
        self._keepalive_expiry = keepalive_expiry
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[_Origin, list[Connection]] = {}
        self._open: set[Connection] = set()  # every connection not yet closed by us
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._closed:
            raise RuntimeError("the transport is closed")
        url = request.url
        scheme = url.scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx2.UnsupportedProtocol(f"{scheme!r} URLs are not supported")
        origin = (scheme, url.host, url.port or _DEFAULT_PORTS[scheme])
        limits = Limits(request)
        head = _head(request)  # refused before any connection is taken
        conn = await self._acquire(origin, limits)
        try:
            conn.start(limits)
            await self._send(conn, request, head)
            status, reason, headers = await conn.head()
        except BaseException:
            self._release(origin, conn, reuse=False)
            raise
        return httpx2.Response(
            status,
            headers=headers,
            stream=_Body(self, origin, conn),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        """Close every connection, idle or in use, and wait (1 s at most) until they are gone:
        the event loop may end right after this."""
        self._closed = True
        conns = list(self._open)
        for conn in conns:
            conn.close()
        self._idle.clear()
        self._open.clear()
        if conns:
            await asyncio.wait([conn.lost for conn in conns], timeout=1.0)

    # --- pool ----------------------------------------------------------------------------------

    async def _acquire(self, origin: _Origin, limits: Limits) -> Connection:
        if self._slots.locked():
            await limits.run(
                self._slots.acquire(),
                "pool",
                lambda: httpx2.PoolTimeout("no free connection to Nextcloud within the timeout"),
            )
        else:
            await self._slots.acquire()  # free now: no timer needed
        try:
            idle = self._idle.get(origin)
            now = time.monotonic()
            while idle:
                conn = idle.pop()
                if conn.reusable and now - conn.idle_since < self._keepalive_expiry:
                    return conn
                conn.close()
                self._open.discard(conn)
            return await self._connect(origin, limits)
        except BaseException:
            self._slots.release()
            raise

    def _release(self, origin: _Origin, conn: Connection, *, reuse: bool) -> None:
        conn.finish()
        if reuse and conn.reusable and not self._closed:
            conn.idle_since = time.monotonic()
            self._idle.setdefault(origin, []).append(conn)
        else:
            conn.close()
            self._open.discard(conn)
        self._slots.release()

    async def _connect(self, origin: _Origin, limits: Limits) -> Connection:
        scheme, host, port = origin
        tls = self._tls_context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            _, conn = await limits.run(
                loop.create_connection(
                    Connection, host, port, ssl=tls, server_hostname=host if tls else None
                ),
                "connect",
                lambda: httpx2.ConnectTimeout(f"could not connect to {host}:{port} within the timeout"),
            )
        except (OSError, ssl.SSLError) as exc:
            raise httpx2.ConnectError(str(exc) or exc.__class__.__name__) from exc
        self._open.add(conn)
        return conn

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:  # made at the first https connection: loading CAs takes time
            self._ssl_context = httpx2.create_ssl_context(verify=self._verify)
        return self._ssl_context

    async def _send(self, conn: Connection, request: httpx2.Request, head: bytes) -> None:
        chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
        stream = request.stream
        if isinstance(stream, httpx2.ByteStream) and not chunked:
            await conn.write(head + request.content)  # the common case: one write
            return
        await conn.write(head)
        assert isinstance(stream, httpx2.AsyncByteStream)
        async for part in stream:
            if not part:
                continue
            await conn.write(b"%x\r\n%b\r\n" % (len(part), part) if chunked else part)
        if chunked:
            await conn.write(b"0\r\n\r\n")
