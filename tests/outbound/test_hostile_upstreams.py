"""The bounds of the outbound client against a hostile upstream on loopback (tests/hostile.py):
trailers that never end or drip, a header line that never ends, a body that is not the gzip it
claims, an answer to an upload that comes before the upload is sent. Each ends quickly with an
error that says what happened, and the server shows how little it got to send."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudError, NextcloudTimeout
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.outbound.client import BoundedClient, Bounds
from tests.hostile import OFFERED, hostile_server

ALICE = BasicCredential("alice", "pw")
# What socket buffers on loopback may hold beyond what the client read, with a wide margin.
SLACK = 16 * 1024 * 1024


def nextcloud(url: str, deadline: float = 30.0) -> NextcloudHTTP:
    return NextcloudHTTP(url, max_retries=0, deadline=deadline)


@pytest.mark.parametrize("answer", ["endless-trailer-line", "endless-trailers"])
async def test_endless_trailers_are_refused_long_before_the_server_is_done(answer: str) -> None:
    """Review finding 6: a chunked answer whose trailer section never ends grew the process to
    gigabytes; now the trailer is bounded like a header and the exchange ends at once."""
    async with hostile_server() as server:
        http = nextcloud(server.url)
        try:
            with pytest.raises(NextcloudError) as raised:
                await http.request("GET", f"/{answer}", credential=ALICE)
        finally:
            await http.aclose()
    assert "Nextcloud at 127.0.0.1" in str(raised.value)
    assert server.sent < SLACK < OFFERED


async def test_a_dripping_trailer_ends_at_the_overall_deadline() -> None:
    """The deadline keeps running while trailer bytes arrive one at a time."""
    async with hostile_server() as server:
        http = nextcloud(server.url, deadline=1.0)
        started = time.monotonic()
        try:
            with pytest.raises(NextcloudTimeout, match="NEXTCLOUD_REQUEST_DEADLINE_SECONDS"):
                await http.request("GET", "/dripping-trailer", credential=ALICE)
        finally:
            await http.aclose()
    assert time.monotonic() - started < 25  # far below the 30 s read timeout


async def test_a_header_line_that_never_ends_is_refused() -> None:
    async with hostile_server() as server:
        http = nextcloud(server.url)
        try:
            with pytest.raises(InvalidResponse, match="not HTTP this client reads"):
                await http.request("GET", "/endless-header", credential=ALICE)
        finally:
            await http.aclose()
    assert server.sent < SLACK


async def test_a_body_that_is_not_the_gzip_it_claims_is_a_readable_error() -> None:
    """Review finding 14: a bad gzip body surfaced as a raw decoding error."""
    async with hostile_server() as server:
        http = nextcloud(server.url)
        try:
            with pytest.raises(NextcloudError, match=r"Nextcloud at 127\.0\.0\.1:\d+: the answer's body"):
                await http.request("GET", "/bad-gzip", credential=ALICE)
        finally:
            await http.aclose()


async def test_an_answer_that_comes_before_the_whole_upload_is_read_not_a_send_error() -> None:
    """Nextcloud may refuse an upload (413, 507) as soon as it sees the headers and hang up."""
    answered = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Too Large\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbig")
        await writer.drain()
        answered.set()
        writer.close()

    async def parts() -> AsyncIterator[bytes]:
        yield b"x" * 65536
        await answered.wait()
        for _ in range(64):
            await asyncio.sleep(0)  # the answer and the close reach the client
            yield b"x" * 65536

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    client = BoundedClient(Bounds(answer_bytes=1024, deadline=30, read_timeout=30, connect_timeout=10))
    try:
        answer = await client.request(
            "PUT", f"http://127.0.0.1:{port}/up", data=parts(), headers={"Content-Length": str(65 * 65536)}
        )
    finally:
        await client.aclose()
        listener.close()
        await listener.wait_closed()
    assert (answer.status_code, answer.content) == (413, b"big")
