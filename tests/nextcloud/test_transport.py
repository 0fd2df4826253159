"""The HTTP/1.1 transport under the Nextcloud client (nextcloud/transport.py), against a raw
asyncio server on loopback that writes exactly the bytes each test needs: framing, keep-alive,
answers that stop short or carry more than asked, timeouts, flow control, the pool's bound.
Each test runs on asyncio's own event loop and on uvloop, the server's (conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx2
import pytest

from nextcloud_mcp_server.nextcloud.http11_connection import HIGH_WATER, MAX_HEAD_BYTES, Connection, Limits
from nextcloud_mcp_server.nextcloud.transport import Http11Transport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Closing(bytes):
    """An answer after which the server closes the connection."""


@dataclass
class Scripted:
    url: str
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)  # set when the test is done


@contextlib.asynccontextmanager
async def scripted(answer: Callable[[Scripted, bytes], Awaitable[bytes | None]]) -> AsyncIterator[Scripted]:
    """A server that reads each request head (and a body by Content-Length or chunked to its end)
    and writes what `answer` returns for it; None closes the connection without answering, and
    so does a `Closing` answer once it is written."""
    state = Scripted(url="")
    handlers: set[asyncio.Task[None]] = set()
    writers: set[asyncio.StreamWriter] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state.connections += 1
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                body = b""
                lowered = head.lower()
                if b"content-length:" in lowered:
                    length = int(lowered.split(b"content-length:")[1].split(b"\r\n")[0])
                    body = await reader.readexactly(length)
                elif b"transfer-encoding: chunked" in lowered:
                    body = await reader.readuntil(b"\r\n0\r\n\r\n")
                state.requests.append(head + body)
                out = await answer(state, head)
                if out is None:
                    break
                writer.write(out)
                await writer.drain()
                if isinstance(out, Closing):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    state.url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    try:
        yield state
    finally:
        state.stop.set()  # answers still held back end now
        listener.close()
        for writer in writers:  # a client that failed may still hold its connections open
            writer.close()
        await asyncio.gather(*handlers, return_exceptions=True)


def fixed(*answers: bytes) -> Callable[[Scripted, bytes], Awaitable[bytes | None]]:
    """Answer the n-th request with the n-th bytes (the last one for every later request)."""

    async def answer(state: Scripted, head: bytes) -> bytes | None:
        return answers[min(len(state.requests), len(answers)) - 1]

    return answer


def client(**options: object) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=Http11Transport(**options), timeout=5)  # type: ignore[arg-type]


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Connection]:
    """Every connection the transports of the test open, in order."""
    connections: list[Connection] = []
    connect = Http11Transport._connect

    async def recorded(self: Http11Transport, origin: tuple[str, str, int], limits: Limits) -> Connection:
        connections.append(await connect(self, origin, limits))
        return connections[-1]

    monkeypatch.setattr(Http11Transport, "_connect", recorded)
    return connections


async def test_a_kept_alive_connection_serves_the_next_request() -> None:
    async with scripted(fixed(OK)) as server, client() as http:
        for _ in range(3):
            response = await http.get(server.url + "/a?b=c d")
            assert (response.status_code, response.text) == (200, "hello")
    assert server.connections == 1
    assert server.requests[0].startswith(b"GET /a?b=c%20d HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in server.requests[0]


async def test_a_chunked_answer_is_decoded() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    async with scripted(fixed(chunked)) as server, client() as http:
        assert (await http.get(server.url)).content == b"abcde"
        assert (await http.get(server.url)).content == b"abcde"
    assert server.connections == 1


async def test_a_body_that_runs_to_the_close_is_read_whole_and_the_connection_not_kept() -> None:
    to_close = Closing(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it")
    async with scripted(fixed(to_close)) as server, client() as http:
        assert (await http.get(server.url)).content == b"all of it"
        assert (await http.get(server.url)).content == b"all of it"
    assert server.connections == 2


async def test_a_truncated_body_is_a_protocol_error_not_a_short_answer() -> None:
    truncated = Closing(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
    async with scripted(fixed(truncated)) as server, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="before its body was complete"):
            await http.get(server.url)


async def test_a_connection_closed_without_an_answer_is_a_protocol_error() -> None:
    async def never(state: Scripted, head: bytes) -> bytes | None:
        return None

    async with scripted(never) as server, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="before an answer was complete"):
            await http.get(server.url)


async def test_a_malformed_answer_is_a_protocol_error() -> None:
    async with scripted(fixed(b"HTTP/1.1 abc nonsense\r\n\r\n")) as server, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="malformed HTTP answer"):
            await http.get(server.url)


async def test_endless_headers_are_refused_past_the_limit() -> None:
    """A server that keeps sending one endless header cannot grow the client: it hangs up."""
    sent, done = 0, asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nX-Long: ")
            while sent < 64 * MAX_HEAD_BYTES:  # the client must hang up long before this
                writer.write(b"a" * 16384)
                sent += 16384
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
            done.set()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with client() as http:
            with pytest.raises(httpx2.RemoteProtocolError, match="headers exceed"):
                await http.get(f"http://127.0.0.1:{port}/")
        await asyncio.wait_for(done.wait(), 30)
    finally:
        listener.close()
        await listener.wait_closed()
    assert sent < 64 * MAX_HEAD_BYTES


async def test_an_answer_that_does_not_come_is_a_read_timeout() -> None:
    async def slow(state: Scripted, head: bytes) -> bytes | None:
        await state.stop.wait()  # never answers while the test runs
        return None

    async with scripted(slow) as server, client() as http:
        with pytest.raises(httpx2.ReadTimeout):
            await http.get(server.url, timeout=httpx2.Timeout(5, read=0.2))


async def test_an_interim_answer_is_skipped_for_the_real_one() -> None:
    interim = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
    async with scripted(fixed(interim + OK)) as server, client() as http:
        response = await http.get(server.url)
    assert (response.status_code, response.text, response.headers.get("link")) == (200, "hello", None)


async def test_an_answer_to_head_has_no_body_whatever_it_declares() -> None:
    async with (
        scripted(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")) as server,
        client() as http,
    ):
        response = await asyncio.wait_for(http.head(server.url), 10)
    assert (response.status_code, response.headers["content-length"], response.content) == (200, "1000", b"")


async def test_bytes_after_the_answer_are_never_taken_as_part_of_it() -> None:
    smuggled = OK + b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil"
    async with scripted(fixed(smuggled, OK)) as server, client() as http:
        first = await http.get(server.url)
        second = await http.get(server.url)
    assert (first.text, second.text) == ("hello", "hello")
    assert server.connections == 2  # the first connection was not trusted again


async def test_an_answer_left_unread_closes_its_connection() -> None:
    async with scripted(fixed(OK)) as server, client() as http:
        async with http.stream("GET", server.url):
            pass  # headers only
        assert (await http.get(server.url)).text == "hello"
    assert server.connections == 2


async def test_a_streamed_upload_is_sent_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"abc"
        yield b""
        yield b"defgh"

    async with scripted(fixed(OK)) as server, client() as http:
        await http.put(server.url + "/up", content=parts())
    request = server.requests[0]
    assert b"Transfer-Encoding: chunked\r\n" in request
    assert request.endswith(b"\r\n\r\n3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n")


async def test_an_answer_before_the_whole_upload_is_read_not_a_write_error() -> None:
    """Nextcloud may refuse an upload (413, 507) as soon as it sees the headers and hang up."""
    answered = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbig"
        )
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
    try:
        async with client() as http:
            headers = {"Content-Length": str(65 * 65536)}
            response = await http.put(f"http://127.0.0.1:{port}/up", content=parts(), headers=headers)
    finally:
        listener.close()
        await listener.wait_closed()
    assert (response.status_code, response.text) == (413, "big")


async def test_a_body_is_sent_with_its_length() -> None:
    async with scripted(fixed(OK)) as server, client() as http:
        await http.post(server.url, content=b'{"a": 1}')
    assert server.requests[0].endswith(b"Content-Length: 8\r\n\r\n" + b'{"a": 1}')


async def test_a_refused_connection_is_a_connect_error_with_its_cause() -> None:
    listener = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    listener.close()
    await listener.wait_closed()
    async with client() as http:
        with pytest.raises(httpx2.ConnectError) as caught:
            await http.get(f"http://127.0.0.1:{port}/")
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


async def test_the_pool_holds_at_most_max_connections_and_says_so() -> None:
    gate, arrived = asyncio.Event(), asyncio.Event()

    async def held(state: Scripted, head: bytes) -> bytes | None:
        arrived.set()
        await gate.wait()
        return OK

    async with scripted(held) as server, client(max_connections=1) as http:
        first = asyncio.create_task(http.get(server.url))
        await arrived.wait()  # the first request holds the only connection
        with pytest.raises(httpx2.PoolTimeout):
            await http.get(server.url, timeout=httpx2.Timeout(5, pool=0.2))
        gate.set()
        assert (await first).text == "hello"
        assert (await http.get(server.url)).text == "hello"  # the slot came back


async def test_a_cancelled_request_gives_its_slot_back_and_its_connection_up() -> None:
    started = asyncio.Event()

    async def answer(state: Scripted, head: bytes) -> bytes | None:
        if len(state.requests) == 1:
            started.set()
            await state.stop.wait()
            return None
        return OK

    async with scripted(answer) as server, client(max_connections=1) as http:
        pending = asyncio.create_task(http.get(server.url))
        await started.wait()
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        assert (await http.get(server.url, timeout=httpx2.Timeout(5, pool=2))).text == "hello"
    assert server.connections == 2


async def test_a_large_answer_read_slowly_is_buffered_only_up_to_the_high_water_mark(
    opened: list[Connection],
) -> None:
    size = 16 * 1024 * 1024
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode()
    body = b"z" * size
    async with (
        scripted(fixed(head + body)) as server,
        client() as http,
        http.stream("GET", server.url) as response,
    ):
        chunks = response.aiter_raw()
        received = len(await anext(chunks))
        (conn,) = opened
        deadline = asyncio.get_running_loop().time() + 30
        while not conn._paused:  # the reader takes nothing: the socket must get paused
            assert asyncio.get_running_loop().time() < deadline, "reading was never paused"
            await asyncio.sleep(0.01)
        assert conn._buffered <= HIGH_WATER + 1024 * 1024  # at most one read past the mark
        async for chunk in chunks:
            received += len(chunk)
    assert received == size


async def test_closing_the_transport_ends_every_connection_before_it_returns(
    opened: list[Connection],
) -> None:
    """Idle ones and one still in use: the event loop may end right after `aclose`, and a
    connection left behind would be closed by nobody (uvloop warns about the handle)."""
    async with scripted(fixed(OK)) as server:
        transport = Http11Transport()
        http = httpx2.AsyncClient(transport=transport, timeout=5)
        busy = await http.send(http.build_request("GET", server.url), stream=True)  # body unread
        assert (await http.get(server.url)).text == "hello"  # a second connection, now idle
        assert len(opened) == 2
        await http.aclose()
        assert all(conn.lost.done() and conn.closed for conn in opened)
        await busy.aclose()  # afterwards: nothing left to do, nothing raised


@pytest.mark.parametrize(
    "headers",
    [{"If-Match": 'a"\r\nX-Evil: 1'}, {"X-Note": "line\nbreak"}, {"X-Nul": "a\x00b"}, {"Bad Name": "x"}],
)
async def test_a_header_that_would_start_another_is_refused_and_nothing_is_sent(
    headers: dict[str, str],
) -> None:
    async with scripted(fixed(OK)) as server, client() as http:
        with pytest.raises(httpx2.LocalProtocolError):
            await http.get(server.url, headers=headers)
        assert (await http.get(server.url)).text == "hello"  # the slot and the pool still work
    assert (server.connections, len(server.requests)) == (1, 1)  # only the good request's
    assert b"Evil" not in server.requests[0]
