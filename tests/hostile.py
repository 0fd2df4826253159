"""A hostile upstream on loopback: answers that are huge, deep, compressed bombs or that drip.

A raw asyncio HTTP/1.1 server (not an ASGI app: uvicorn drops writes after a disconnect silently,
so it could not tell how much the client actually took). Each answer is written chunk by chunk with
`drain()`, so `sent` counts what left for the client: when the client stops reading and closes,
the writes fail and the count stops, a few socket buffers past what the client read.

    async with hostile_server() as server:
        server.url + "/huge-json"     # see ANSWERS
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

__all__ = ["ANSWERS", "Hostile", "hostile_server"]

# Headers (None: the body is the whole answer, head included) and the body's parts.
Answer = tuple[list[tuple[str, str]] | None, AsyncIterator[bytes]]

CHUNK = 64 * 1024
OFFERED = 64 * 1024 * 1024  # what a "huge" answer offers; the client should take far less


def _huge_json() -> Answer:
    async def body() -> AsyncIterator[bytes]:
        yield b'[{"id": 1, "content": "'
        for _ in range(OFFERED // CHUNK):
            yield b"x" * CHUNK
        yield b'"}]'

    return [("Content-Type", "application/json")], body()


def _declared_huge() -> Answer:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(OFFERED // CHUNK):
            yield b" " * CHUNK

    return [("Content-Type", "application/json"), ("Content-Length", str(OFFERED))], body()


def _huge_property() -> Answer:
    async def body() -> AsyncIterator[bytes]:
        yield (
            b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response>'
            b"<d:href>/remote.php/dav/files/alice/a.txt</d:href><d:propstat><d:prop><d:displayname>"
        )
        for _ in range(OFFERED // CHUNK):
            yield b"y" * CHUNK
        yield b"</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
        yield b"</d:response></d:multistatus>"

    return [("Content-Type", "application/xml; charset=utf-8")], body()


def _deep_xml() -> Answer:
    async def body() -> AsyncIterator[bytes]:
        yield b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response>'
        opening = b"<d:x>" * (CHUNK // 5)
        for _ in range(OFFERED // len(opening)):
            yield opening

    return [("Content-Type", "application/xml; charset=utf-8")], body()


def _gzip_bomb() -> Answer:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    compressed = packer.compress(b"[" + b"0," * (OFFERED // 2)) + packer.flush()

    async def body() -> AsyncIterator[bytes]:
        for start in range(0, len(compressed), CHUNK):
            yield compressed[start : start + CHUNK]

    headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
    return headers, body()


def _drip() -> Answer:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(10_000):
            yield b" "
            await asyncio.sleep(0.2)

    return [("Content-Type", "application/json")], body()


def _chunked_then(trailer: Callable[[], AsyncIterator[bytes]]) -> Callable[[], Answer]:
    """A chunked answer whose body ends well and whose trailer section is `trailer`."""

    def answer() -> Answer:
        async def body() -> AsyncIterator[bytes]:
            yield b"2\r\n[]\r\n0\r\n"
            async for part in trailer():
                yield part

        return [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")], body()

    return answer


async def _endless_trailer_line() -> AsyncIterator[bytes]:
    yield b"X-Trailer: "
    for _ in range(OFFERED // CHUNK):
        yield b"t" * CHUNK


async def _endless_trailers() -> AsyncIterator[bytes]:
    line = b"X-Trailer: t\r\n"
    for _ in range(OFFERED // (len(line) * 1000)):
        yield line * 1000


async def _dripping_trailer() -> AsyncIterator[bytes]:
    yield b"X-Trailer: "
    for _ in range(10_000):
        yield b"t"
        await asyncio.sleep(0.2)


def _endless_header() -> Answer:
    """Raw: a status line, then one header line that never ends."""

    async def body() -> AsyncIterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nX-Long: "
        for _ in range(OFFERED // CHUNK):
            yield b"a" * CHUNK

    return None, body()


def _bad_gzip() -> Answer:
    garbage = b"this is not gzip at all" * 10

    async def body() -> AsyncIterator[bytes]:
        yield garbage

    headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
    return [*headers, ("Content-Length", str(len(garbage)))], body()


ANSWERS: dict[str, Callable[[], Answer]] = {
    "huge-json": _huge_json,
    "declared-huge": _declared_huge,
    "huge-property": _huge_property,
    "deep-xml": _deep_xml,
    "gzip-bomb": _gzip_bomb,
    "drip": _drip,
    "endless-trailer-line": _chunked_then(_endless_trailer_line),
    "endless-trailers": _chunked_then(_endless_trailers),
    "dripping-trailer": _chunked_then(_dripping_trailer),
    "endless-header": _endless_header,
    "bad-gzip": _bad_gzip,
}


@dataclass
class Hostile:
    url: str
    status: int = 200
    sent: int = 0  # body bytes written to clients, all answers together
    requests: list[str] = field(default_factory=list)


async def _handle(server: Hostile, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        if length:
            await reader.readexactly(length)
        server.requests.append(f"{method} {target}")
        path = target.split("?", 1)[0]
        name = next(n for n in ANSWERS if f"/{n}/" in path + "/")  # an answer's name anywhere in the path
        headers, body = ANSWERS[name]()
        status = 207 if name in ("huge-property", "deep-xml") and method == "PROPFIND" else server.status
        if headers is not None:  # None: the body writes the whole answer, head included
            lines = [f"HTTP/1.1 {status} Hostile", "Connection: close", *(f"{k}: {v}" for k, v in headers)]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        async for chunk in body:
            writer.write(chunk)
            await writer.drain()
            server.sent += len(chunk)
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


@contextlib.asynccontextmanager
async def hostile_server() -> AsyncIterator[Hostile]:
    """A hostile upstream on a free loopback port, in the running event loop."""
    state = Hostile("")
    tasks: set[asyncio.Task[None]] = set()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(_handle(state, reader, writer))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    state.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        yield state
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()
