"""Bounds on what an upstream (Nextcloud, the identity provider) can make this process do.

`BoundedTransport` wraps an httpx2 transport and gives every request
- an overall deadline: sending, waiting for the headers and reading the whole body must finish
  within it (per-read timeouts alone let a body dripping one byte at a time hold a call forever);
- a limit on the bytes of the body as it comes off the wire: reading stops at the limit, so a huge
  answer costs at most the limit in memory and network, not its size.

A body the caller leaves unread (a DAV `stat` takes the first entry and stops) is drained on close
when what is left is small (`DRAIN_BYTES`, `DRAIN_SECONDS`): otherwise the connection could not go
back to the pool and the next request would open a new one.

A request may carry its own limits in `request.extensions` (`ANSWER_LIMIT`, `DEADLINE`); `None`
there means "no limit" (for a caller that bounds what it reads itself, e.g. a ranged file read).
An inner transport that enforces the deadline on each of its own waits (`honours_deadline`, as the
Nextcloud client's `Http11Transport` does) is handed it as a `Deadline` under `DEADLINE_AT` and
nothing is wrapped in `asyncio.timeout` here: that cost a tenth of a call's CPU, twice per chunk.
Both errors are httpx2 transport errors, so code that already maps those keeps working; callers
that can say more (which setting to raise) catch them first.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings

__all__ = [
    "ANSWER_LIMIT",
    "DEADLINE",
    "DEADLINE_AT",
    "AnswerTooLarge",
    "BoundedTransport",
    "Deadline",
    "DeadlineExceeded",
    "read_bounded",
]

ANSWER_LIMIT = "nextcloud_mcp_server.answer_limit"
DEADLINE = "nextcloud_mcp_server.deadline"
DEADLINE_AT = "nextcloud_mcp_server.deadline_at"
_UNSET: Any = object()
DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 1.0


class AnswerTooLarge(httpx2.TransportError):
    """The answer is larger than the limit set for it; reading stopped at the limit."""

    def __init__(self, limit: int, *, request: httpx2.Request | None = None) -> None:
        super().__init__(f"the answer is larger than {limit} bytes", request=request)
        self.limit = limit


class DeadlineExceeded(httpx2.TimeoutException):
    """The whole exchange (send, headers, body) did not finish within the deadline."""

    def __init__(self, seconds: float, *, request: httpx2.Request | None = None) -> None:
        super().__init__(f"no complete answer within {seconds:g} s", request=request)
        self.seconds = seconds


class Deadline:
    """When a whole exchange must be over (event-loop time), and how long it was given."""

    __slots__ = ("at", "seconds")

    def __init__(self, at: float, seconds: float) -> None:
        self.at = at
        self.seconds = seconds

    def exceeded(self, request: httpx2.Request) -> DeadlineExceeded:
        return DeadlineExceeded(self.seconds, request=request)


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        request: httpx2.Request,
        limit: int | None,
        deadline: float | None,
        until: float | None,
    ) -> None:
        self._inner = inner
        self._request = request
        self._limit = limit
        self._deadline = deadline
        self._until = until
        self._chunks: AsyncIterator[bytes] | None = None
        self._finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        chunks = self._chunks = self._inner.__aiter__()
        while True:
            try:
                if self._until is None:
                    chunk = await chunks.__anext__()
                else:
                    async with asyncio.timeout_at(self._until):
                        chunk = await chunks.__anext__()
            except StopAsyncIteration:
                self._finished = True
                return
            except TimeoutError:
                raise DeadlineExceeded(self._deadline or 0.0, request=self._request) from None
            received += len(chunk)
            if self._limit is not None and received > self._limit:
                raise AnswerTooLarge(self._limit, request=self._request)
            yield chunk

    async def aclose(self) -> None:
        try:
            if self._chunks is not None and not self._finished:
                await self._drain(self._chunks)
        finally:
            await self._inner.aclose()

    async def _drain(self, chunks: AsyncIterator[bytes]) -> None:
        """Read a small rest of the body so that the connection can be reused; give up (the
        connection is then closed) past `DRAIN_BYTES` or `DRAIN_SECONDS`, or on any error."""
        left = DRAIN_BYTES
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                async for chunk in chunks:
                    left -= len(chunk)
                    if left < 0:
                        return
        except (TimeoutError, httpx2.HTTPError, OSError):
            return
        self._finished = True


class BoundedTransport(httpx2.AsyncBaseTransport):
    """`inner` with a default answer limit and overall deadline per request (None: no limit)."""

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, *, answer_limit: int | None, deadline: float | None
    ) -> None:
        self.inner = inner
        self.answer_limit = answer_limit
        self.deadline = deadline

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        asked = request.extensions.get(ANSWER_LIMIT, _UNSET)
        limit: int | None = self.answer_limit if asked is _UNSET else asked
        asked = request.extensions.get(DEADLINE, _UNSET)
        deadline: float | None = self.deadline if asked is _UNSET else asked
        until = None if deadline is None else asyncio.get_running_loop().time() + deadline
        if until is not None and getattr(self.inner, "honours_deadline", False):
            # a new dict: the caller may hand the same extensions to every request it makes
            request.extensions = {**request.extensions, DEADLINE_AT: Deadline(until, deadline or 0.0)}
            until = None  # enforced by the inner transport on each of its waits
        try:
            if until is None:
                response = await self.inner.handle_async_request(request)
            else:
                async with asyncio.timeout_at(until):
                    response = await self.inner.handle_async_request(request)
        except TimeoutError:
            raise DeadlineExceeded(deadline or 0.0, request=request) from None
        declared = response.headers.get("content-length", "")
        if limit is not None and declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise AnswerTooLarge(limit, request=request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _BoundedStream(response.stream, request, limit, deadline, until)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def read_bounded(response: httpx2.Response, limit: int | None) -> bytes:
    """Read a streamed response's decoded body, refusing more than `limit` bytes of it (a small
    compressed answer can decode to gigabytes). Afterwards `response.content` works as usual."""
    chunks: list[bytes] = []
    received = 0
    async for chunk in response.aiter_bytes():
        received += len(chunk)
        if limit is not None and received > limit:
            raise AnswerTooLarge(limit, request=response.request)
        chunks.append(chunk)
    body = b"".join(chunks)
    response._content = body  # what `aread()` itself sets; httpx2 has no bounded read
    return body


def idp_client(settings: Settings) -> httpx2.AsyncClient:
    """The HTTP client for the identity provider: discovery, JWKS, introspection, token endpoint.
    Its answers are small: they are bounded by IDP_MAX_ANSWER_BYTES and IDP_REQUEST_DEADLINE_SECONDS,
    and asked for uncompressed, so the limit on the wire is the limit in memory."""
    from nextcloud_mcp_server.nextcloud.http import no_cookies

    transport = BoundedTransport(
        httpx2.AsyncHTTPTransport(),
        answer_limit=settings.idp_max_answer_bytes,
        deadline=settings.idp_request_deadline_seconds,
    )
    return httpx2.AsyncClient(
        transport=transport,
        timeout=httpx2.Timeout(10.0),
        follow_redirects=False,
        cookies=no_cookies(),
        headers={"Accept-Encoding": "identity"},
    )
