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

CHUNK = 64 * 1024
OFFERED = 64 * 1024 * 1024  # what a "huge" answer offers; the client should take far less


def _huge_json() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
    async def body() -> AsyncIterator[bytes]:
        yield b'[{"id": 1, "content": "'
        for _ in range(OFFERED // CHUNK):
            yield b"x" * CHUNK
        yield b'"}]'

    return [("Content-Type", "application/json")], body()


def _declared_huge() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(OFFERED // CHUNK):
            yield b" " * CHUNK

    return [("Content-Type", "application/json"), ("Content-Length", str(OFFERED))], body()


def _huge_property() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
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


def _deep_xml() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
    async def body() -> AsyncIterator[bytes]:
        yield b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response>'
        opening = b"<d:x>" * (CHUNK // 5)
        for _ in range(OFFERED // len(opening)):
            yield opening

    return [("Content-Type", "application/xml; charset=utf-8")], body()


def _gzip_bomb() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    compressed = packer.compress(b"[" + b"0," * (OFFERED // 2)) + packer.flush()

    async def body() -> AsyncIterator[bytes]:
        for start in range(0, len(compressed), CHUNK):
            yield compressed[start : start + CHUNK]

    headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
    return headers, body()


def _drip() -> tuple[list[tuple[str, str]], AsyncIterator[bytes]]:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(10_000):
            yield b" "
            await asyncio.sleep(0.2)

    return [("Content-Type", "application/json")], body()


ANSWERS: dict[str, Callable[[], tuple[list[tuple[str, str]], AsyncIterator[bytes]]]] = {
    "huge-json": _huge_json,
    "declared-huge": _declared_huge,
    "huge-property": _huge_property,
    "deep-xml": _deep_xml,
    "gzip-bomb": _gzip_bomb,
    "drip": _drip,
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
