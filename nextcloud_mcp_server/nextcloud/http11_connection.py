"""One HTTP/1.1 connection to Nextcloud and the bounds of one request's waits, for
`transport.Http11Transport` (docs/ADR/0030-own-http11-transport.md).

`Connection` is an asyncio `Protocol` that feeds llhttp (`httptools.HttpResponseParser`) and
keeps what it parsed until the transport takes it: the head, then the body part by part. It
pauses reading past `HIGH_WATER` bytes not yet taken and refuses a head over `MAX_HEAD_BYTES`.
`Limits` turns httpx2's timeouts and `BoundedTransport`'s overall deadline into one timer per
wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import httptools
import httpx2

from nextcloud_mcp_server.http_bounds import DEADLINE_AT, Deadline

__all__ = ["HIGH_WATER", "MAX_HEAD_BYTES", "Connection", "Limits"]

HIGH_WATER = 256 * 1024  # bytes read but not yet taken before the socket is paused
# An answer's status line and headers: Nextcloud's take a few KiB (httpcore2 allowed 100 KiB too);
# past this a hostile server could otherwise grow llhttp's header buffers without end.
MAX_HEAD_BYTES = 100 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})
T = TypeVar("T")


class _Expired(Exception):
    """A wait's timer ran out."""


def _expire(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_exception(_Expired())


class Limits:
    """The bounds of one request's waits: httpx2's timeouts and the overall deadline."""

    __slots__ = ("deadline", "request", "timeouts")

    def __init__(self, request: httpx2.Request) -> None:
        self.request = request
        self.timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        self.deadline: Deadline | None = request.extensions.get(DEADLINE_AT)

    def when(self, loop: asyncio.AbstractEventLoop, kind: str) -> tuple[float | None, bool]:
        """When a wait of `kind` (connect, pool, write, read) must end, and whether that is the
        overall deadline (rather than the timeout of that kind)."""
        within = self.timeouts.get(kind)
        at = None if within is None else loop.time() + within
        if self.deadline is not None and (at is None or self.deadline.at <= at):
            return self.deadline.at, True
        return at, False

    async def wait(self, waiter: asyncio.Future[Any], kind: str, timed_out: Callable[[], Exception]) -> None:
        """Await `waiter` (a future nobody else awaits) within the bounds of `kind`."""
        loop = asyncio.get_running_loop()
        at, is_deadline = self.when(loop, kind)
        if at is None:
            await waiter
            return
        timer = loop.call_at(at, _expire, waiter)
        try:
            await waiter
        except _Expired:
            raise self._exceeded(is_deadline, timed_out) from None
        finally:
            timer.cancel()

    async def run(self, work: Awaitable[T], kind: str, timed_out: Callable[[], Exception]) -> T:
        """Run `work` within the bounds of `kind` (for waits that are not a future of ours)."""
        at, is_deadline = self.when(asyncio.get_running_loop(), kind)
        try:
            async with asyncio.timeout_at(at):
                return await work
        except TimeoutError:
            raise self._exceeded(is_deadline, timed_out) from None

    def _exceeded(self, is_deadline: bool, timed_out: Callable[[], Exception]) -> Exception:
        if is_deadline and self.deadline is not None:
            return self.deadline.exceeded(self.request)
        return timed_out()


class Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; one request and its answer at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser: Any = None  # httptools.HttpResponseParser while a response is expected
        self._limits: Limits | None = None
        self._head_bytes = 0
        self._head_only = False
        self._status = 0
        self._reason = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_done = False
        self._complete = False
        self._keep_alive = False
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self._error: BaseException | None = None
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._can_write: asyncio.Future[None] | None = None
        self._unexpected = False
        # set when the connection is gone (the transport waits for it before its loop may close)
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # --- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's are not subclasses of asyncio.Transport)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self._complete:
            # Bytes nobody asked for: this connection can no longer be trusted to frame answers.
            self._unexpected = True
            self._close_transport()
            return
        if not self._head_done:
            # bytes fed before this read that did not finish the headers (so at most one read past)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail(httpx2.RemoteProtocolError(f"the answer's headers exceed {MAX_HEAD_BYTES} bytes"))
                self._wake()
                return
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx2.RemoteProtocolError("the server switched protocols unasked"))
        except httptools.HttpParserError as exc:
            self._fail(httpx2.RemoteProtocolError(f"malformed HTTP answer ({exc})"))
        if self._buffered > HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.lost.done():
            self.lost.set_result(None)
        if exc is not None and self._error is None and not self._complete:
            self._error = exc
        self._eof = True
        self._wake()
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)

    def pause_writing(self) -> None:
        if self._can_write is None or self._can_write.done():
            self._can_write = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)

    # --- httptools callbacks -------------------------------------------------------------------

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._complete:  # a second answer in the same bytes: never taken as part of this one
            self._unexpected = True
            return
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            return  # an interim answer (103 Early Hints, ...): the real one follows
        self._status = status
        self._head_done = True
        # asked now: llhttp forgets the answer's framing once it is complete
        self._keep_alive = bool(self._parser.should_keep_alive())
        if self._head_only:
            self._complete = True  # an answer to HEAD has no body, whatever it declares

    def on_body(self, body: bytes) -> None:
        if self._complete:
            self._unexpected = True
            return
        self._chunks.append(body)
        self._buffered += len(body)

    def on_message_complete(self) -> None:
        if not self._head_done:  # the end of an interim answer
            self._reason = b""
            self._headers = []
            return
        self._complete = True

    # --- used by the transport -----------------------------------------------------------------

    @property
    def reusable(self) -> bool:
        return (
            not self.closed
            and not self._unexpected
            and self.transport is not None
            and not self.transport.is_closing()
        )

    def start(self, limits: Limits) -> None:
        """Expect the answer to a new request."""
        self._parser = httptools.HttpResponseParser(self)
        self._limits = limits
        self._head_only = limits.request.method == "HEAD"
        self._status, self._reason, self._headers = 0, b"", []
        self._head_done = self._complete = self._keep_alive = False
        self._chunks, self._buffered, self._head_bytes = [], 0, 0
        self._error = None

    async def write(self, data: bytes) -> None:
        if self._head_done:
            # Answered before the whole request was sent (413, 507, 401 ...): the rest is not
            # sent, the answer is read, and the connection is not used again.
            self._unexpected = True
            return
        if self.closed or self.transport is None or self.transport.is_closing():
            raise httpx2.WriteError("the connection was closed before the request was sent")
        self.transport.write(data)
        if self._can_write is not None and not self._can_write.done():
            assert self._limits is not None
            await self._limits.run(
                asyncio.shield(self._can_write),
                "write",
                lambda: httpx2.WriteTimeout("the request could not be sent within the timeout"),
            )
            if self._lost_unanswered():
                raise httpx2.WriteError("the connection was closed while the request was sent")

    async def head(self) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        while not self._head_done:
            await self._wait("the answer's headers")
        return self._status, self._reason, self._headers

    async def next_chunk(self) -> bytes | None:
        """The next part of the body, or None at its end."""
        while not self._chunks:
            if self._complete:
                return None
            await self._wait("the answer's body")
        data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
        self._chunks, self._buffered = [], 0
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()
        return data

    def _lost_unanswered(self) -> bool:
        """The connection closed before the head of an answer came."""
        return self.closed and not self._head_done

    def keep_alive(self) -> bool:
        """The answer was read to its end and the server keeps the connection open."""
        return self._complete and not self._head_only and self._keep_alive

    def finish(self) -> None:
        self._parser = self._limits = None

    def close(self) -> None:
        self.closed = True
        self._close_transport()

    async def _wait(self, what: str) -> None:
        """Wait for anything to happen on the connection (the caller looks again at what)."""
        if self._error is not None:
            raise self._mapped_error()
        if self._eof:
            self._end_of_stream()
            return
        assert self._limits is not None
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._limits.wait(
                waiter, "read", lambda: httpx2.ReadTimeout(f"no more of {what} within the timeout")
            )
        finally:
            self._waiter = None

    def _end_of_stream(self) -> None:
        """The server closed the connection: the end of a body that runs to the close, or a
        truncated answer."""
        if self._head_done and not self._complete and self._delimited_by_close():
            self._complete = True
            return
        if not self._complete:
            where = "its body" if self._head_done else "an answer"
            raise httpx2.RemoteProtocolError(f"the server closed the connection before {where} was complete")

    def _delimited_by_close(self) -> bool:
        if self._status in _NO_BODY_STATUSES:
            return False
        for name, value in self._headers:
            lowered = name.lower()
            if lowered == b"content-length":
                return False
            if lowered == b"transfer-encoding" and b"chunked" in value.lower():
                return False
        return True

    def _mapped_error(self) -> BaseException:
        error = self._error
        assert error is not None
        if isinstance(error, httpx2.HTTPError):
            return error
        mapped = httpx2.ReadError(f"the connection failed ({error.__class__.__name__}: {error})")
        mapped.__cause__ = error
        return mapped

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._close_transport()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _close_transport(self) -> None:
        # abort, not close: a connection is only ever closed idle, broken or with an answer nobody
        # reads, so there is nothing to flush, and a TLS close would first wait for the server's
        # close_notify (uvloop: up to 30 s, past the end of the event loop at shutdown)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()
