"""Answers of upstreams, read within bounds.

`StreamedAnswer` is an answer whose body is still on the wire: iterate it (`aiter_bytes`), read
it whole (`read`) or only its start (`read_start`); every byte counted is a decoded byte, so a
small compressed answer cannot grow past the limit in memory. `Answer` is one read whole.

A body left unread is drained when what is left is small (`DRAIN_BYTES`, `DRAIN_SECONDS`), so
the connection goes back to the pool; otherwise the connection is closed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from nextcloud_mcp_server.outbound.errors import AnswerTooLarge, OutboundError

__all__ = ["DRAIN_BYTES", "DRAIN_SECONDS", "Answer", "Headers", "StreamedAnswer", "all_values", "charset_of"]

DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 1.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

# What an answer's headers offer: a mapping whose `get` ignores case (aiohttp's CIMultiDictProxy).
Headers = Mapping[str, str]


def all_values(headers: Headers, name: str) -> list[str]:
    """Every value of a header that may come more than once (aiohttp's multidict has `getall`)."""
    getall = getattr(headers, "getall", None)
    if getall is not None:
        return list(getall(name, []))
    value = headers.get(name)
    return [value] if value else []


def charset_of(content_type: str | None) -> str | None:
    """The `charset` parameter of a Content-Type value, if any."""
    for param in (content_type or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"') or None
    return None


class Answer:
    """An answer read whole: status, headers, the (decoded) body."""

    __slots__ = ("content", "headers", "status_code", "url")

    def __init__(self, status_code: int, headers: Headers, content: bytes, url: str) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.url = url

    @property
    def text(self) -> str:
        return self.content.decode(charset_of(self.headers.get("content-type")) or "utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON (`ValueError` if it is not; `RecursionError` if nested too deep)."""
        return json.loads(self.content)

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers


class StreamedAnswer:
    """An answer whose body is read as it arrives, counted against `limit` (None: no limit).

    `read_chunk` returns the next decoded bytes, b"" at the end, and raises `OutboundError`s only;
    `release` gives the connection back (`reusable`: the body was read to its end)."""

    def __init__(
        self,
        status_code: int,
        headers: Headers,
        url: str,
        *,
        read_chunk: Callable[[], Awaitable[bytes]],
        release: Callable[[bool], None],
        limit: int | None,
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.url = url
        self.limit = limit
        self._read_chunk = read_chunk
        self._release = release
        self._received = 0
        self._finished = False
        self._released = False
        self.extras: dict[str, Any] = {}  # what the caller's layer attaches (e.g. XML limits)

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        while not self._finished:
            chunk = await self._read_chunk()
            if not chunk:
                self._finished = True
                return
            self._received += len(chunk)
            if self.limit is not None and self._received > self.limit:
                raise AnswerTooLarge(self.limit)
            yield chunk

    async def read(self) -> bytes:
        """The whole body; `AnswerTooLarge` past the limit."""
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def read_start(self, size: int) -> bytes:
        """At most about `size` bytes of the body (an error answer's start is enough to quote)."""
        chunks: list[bytes] = []
        taken = 0
        async for chunk in self.aiter_bytes():
            chunks.append(chunk)
            taken += len(chunk)
            if taken >= size:
                break
        return b"".join(chunks)

    async def answer(self) -> Answer:
        return Answer(self.status_code, self.headers, await self.read(), self.url)

    def abandon(self) -> None:
        """Close the connection without reading more."""
        if not self._released:
            self._released = True
            self._release(False)

    async def aclose(self) -> None:
        """Give the connection back: drained when the rest is small, else closed."""
        if self._released:
            return
        self._released = True
        if not self._finished:
            await self._drain()
        self._release(self._finished)

    async def _drain(self) -> None:
        left = DRAIN_BYTES
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                while left >= 0:
                    chunk = await self._read_chunk()
                    if not chunk:
                        self._finished = True
                        return
                    left -= len(chunk)
        except (TimeoutError, OutboundError):
            return
