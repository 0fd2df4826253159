"""The outbound client's own rules, against small servers on loopback: no connection leaks on odd
answers, idle connections dropped before the server drops them, proxies from the environment,
requests that could split refused before anything is sent."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp.connector
import pytest

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudUnreachable, ServerError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, retry_after_seconds
from nextcloud_mcp_server.outbound.client import BoundedClient, Bounds
from nextcloud_mcp_server.outbound.errors import UnsafeRequest

BOUNDS = Bounds(answer_bytes=1024 * 1024, deadline=20, read_timeout=20, connect_timeout=10)


@dataclass
class Server:
    url: str
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)


@contextlib.asynccontextmanager
async def serving(answer: Callable[[Server, bytes], Awaitable[bytes]]) -> AsyncIterator[Server]:
    """Reads each request head (bodies by Content-Length) and writes what `answer` returns."""
    state = Server("")
    tasks: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                for line in head.lower().split(b"\r\n"):
                    if line.startswith(b"content-length:"):
                        await reader.readexactly(int(line.split(b":")[1]))
                state.requests.append(head)
                writer.write(await answer(state, head))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(handle(reader, writer))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    listener = await asyncio.start_server(accept, "127.0.0.1", 0)
    state.url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    try:
        yield state
    finally:
        listener.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def ok(extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{extra}\r\n[]".encode()


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 7 ", 7.0),
        ("²", None),
        ("١٢", None),
        ("-1", None),
        ("1.5", None),
        ("", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
        ("Wed, 99 Zzz 99999 99:99:99 GMT", None),
        ("9" * 40, None),
    ],
)
def test_retry_after_takes_ascii_digits_and_http_dates_only(value: str, seconds: float | None) -> None:
    """Review finding 7: `²` passed `isdigit()` and then failed `float()`."""
    assert retry_after_seconds(value) == seconds


async def test_odd_retry_after_values_never_leak_a_connection() -> None:
    """Review finding 7: with two connections, two 503s whose Retry-After was `²` stalled every
    later call. Here the pool holds one connection: each call must give it back."""

    async def answer(server: Server, head: bytes) -> bytes:
        if len(server.requests) % 2:
            return b"HTTP/1.1 503 Busy\r\nRetry-After: \xc2\xb2\r\nContent-Length: 0\r\n\r\n"
        return ok()

    async with serving(answer) as server:

        async def no_wait(seconds: float) -> None:
            return None

        http = NextcloudHTTP(server.url, max_connections=1, max_retries=1, deadline=10, sleep=no_wait)
        once = NextcloudHTTP(server.url, max_connections=1, max_retries=0, deadline=10)
        try:
            for _ in range(4):
                assert (await http.request("GET", "/x", credential=None)).content == b"[]"
            for _ in range(2):  # not retried: the 503 is the answer, twice, on the one connection
                with pytest.raises(ServerError):
                    await once.request("GET", "/x", credential=None)
                assert (await once.request("GET", "/x", credential=None)).content == b"[]"
        finally:
            await http.aclose()
            await once.aclose()
    assert server.connections <= 2


class FrozenClock:
    """aiohttp's pool reads `monotonic()` to judge idle connections; the test moves it by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("keep_alive", "connections"), [("", 1), ("Keep-Alive: timeout=3, max=100\r\n", 2)])
async def test_idle_connections_are_dropped_before_the_server_drops_them(
    monkeypatch: pytest.MonkeyPatch, keep_alive: str, connections: int
) -> None:
    """Review finding 11: a connection idle for 2.5 s is reused under our own 4 s limit, but not
    when the server said it keeps idle connections only 3 s (we drop them after 2 s)."""
    clock = FrozenClock()
    monkeypatch.setattr(aiohttp.connector, "monotonic", clock)

    async def answer(server: Server, head: bytes) -> bytes:
        return ok(keep_alive)

    async with serving(answer) as server:
        client = BoundedClient(BOUNDS, keepalive=4.0)
        try:
            await client.request("GET", server.url + "/a")
            clock.now += 2.5
            await client.request("GET", server.url + "/b")
        finally:
            await client.aclose()
    assert server.connections == connections
    assert client.keepalive == (2.0 if keep_alive else 4.0)


async def test_proxies_from_the_environment_carry_the_request_unless_no_proxy_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review finding 12: HTTP_PROXY was silently ignored. It is honoured now, NO_PROXY too."""

    async def answer(server: Server, head: bytes) -> bytes:
        return ok()

    async with serving(answer) as proxy:
        for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        through = NextcloudHTTP("http://nextcloud.invalid", max_retries=0)
        monkeypatch.setenv("NO_PROXY", "nextcloud.invalid")
        direct = NextcloudHTTP("http://nextcloud.invalid", max_retries=0)
        try:
            assert through.proxy == proxy.url
            assert direct.proxy is None
            assert (await through.request("GET", "/status.php", credential=None)).content == b"[]"
            with pytest.raises(NextcloudUnreachable, match="could not be resolved"):
                await direct.request("GET", "/status.php", credential=None)
        finally:
            await through.aclose()
            await direct.aclose()
    assert proxy.requests == [proxy.requests[0]]
    assert proxy.requests[0].startswith(b"GET http://nextcloud.invalid/status.php HTTP/1.1\r\n")


@pytest.mark.parametrize(
    ("method", "headers", "said"),
    [
        ("GET", {"If-Match": 'a"\r\nX-Evil: 1'}, "line break"),
        ("GET", {"X-Note": "line\nbreak"}, "line break"),
        ("GET", {"X-Nul": "a\x00b"}, "line break or NUL"),
        ("GET", {"Bad Name": "x"}, "not a header name"),
        ("GET", {"If-Match": '"étag"'}, "outside ASCII"),
        ("GE T", {}, "not an HTTP method"),
    ],
)
async def test_a_request_that_could_split_is_refused_and_nothing_is_sent(
    method: str, headers: dict[str, str], said: str
) -> None:
    async def answer(server: Server, head: bytes) -> bytes:
        return ok()

    async with serving(answer) as server:
        client = BoundedClient(BOUNDS)
        try:
            with pytest.raises(UnsafeRequest, match=said):
                await client.request(method, server.url + "/x", headers=headers)
            assert (await client.request("GET", server.url + "/y")).content == b"[]"
        finally:
            await client.aclose()
    assert len(server.requests) == 1
    assert b"Evil" not in server.requests[0]


async def test_a_path_with_a_space_or_line_break_is_refused() -> None:
    http = NextcloudHTTP("http://127.0.0.1:9", max_retries=0)
    try:
        for path in ("/a b", "/a\r\nX-Evil: 1", "/a\x00"):
            with pytest.raises(InvalidInput, match="space or a control character"):
                await http.request("GET", path, credential=None)
    finally:
        await http.aclose()


async def test_a_cancelled_request_gives_its_connection_slot_back() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def answer(server: Server, head: bytes) -> bytes:
        if len(server.requests) == 1:
            started.set()
            await release.wait()
        return ok()

    async with serving(answer) as server:
        client = BoundedClient(BOUNDS, max_connections=1)
        try:
            pending = asyncio.create_task(client.request("GET", server.url + "/slow"))
            await started.wait()
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pending
            assert (await client.request("GET", server.url + "/next")).content == b"[]"
        finally:
            release.set()
            await client.aclose()


async def test_https_to_a_plain_http_port_says_to_try_http() -> None:
    """Issue 33: `https://` on a port that speaks plain HTTP named only WRONG_VERSION_NUMBER.
    A web server answers a TLS greeting with a plain-text 400, as this one does."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    http = NextcloudHTTP(f"https://127.0.0.1:{listener.sockets[0].getsockname()[1]}", max_retries=0)
    try:
        with pytest.raises(NextcloudUnreachable, match="does not speak TLS; try http://"):
            await http.request("GET", "/status.php", credential=None)
    finally:
        await http.aclose()
        listener.close()
        await listener.wait_closed()


async def test_a_large_body_is_sent_whole_with_its_length() -> None:
    """A note or a card near Nextcloud's limits (a few MiB) as one bytes body: sent in parts with
    its Content-Length (aiohttp warns about large bytes bodies, and warnings are errors here)."""
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(
            next(h for h in head.lower().split(b"\r\n") if h.startswith(b"content-length:")).split(b":")[1]
        )
        received.append(await reader.readexactly(length))
        writer.write(ok())
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    client = BoundedClient(BOUNDS)
    body = bytes(range(256)) * (12 * 1024)  # 3 MiB
    try:
        answer = await client.request(
            "PUT", f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/n", data=body
        )
    finally:
        await client.aclose()
        listener.close()
        await listener.wait_closed()
    assert answer.status_code == 200
    assert received == [body]


async def test_every_upstream_is_told_which_server_asks() -> None:
    """The identity provider and client-metadata hosts, not only Nextcloud, see
    `nextcloud-mcp-bridge/<version>` (aiohttp's default names only the library), and a client
    that sets its own User-Agent keeps it."""

    async def answer(server: Server, head: bytes) -> bytes:
        return ok()

    async with serving(answer) as server:
        bounds = Bounds(answer_bytes=1024, deadline=10.0, read_timeout=10.0, connect_timeout=10.0)
        plain = BoundedClient(bounds, headers={"Accept-Encoding": "identity"})
        named = BoundedClient(bounds, headers={"User-Agent": "someone/1"})
        try:
            await plain.request("GET", server.url + "/a")
            await named.request("GET", server.url + "/b")
        finally:
            await plain.aclose()
            await named.aclose()
    agents = [
        next(line for line in head.split(b"\r\n") if line.lower().startswith(b"user-agent:"))
        for head in server.requests
    ]
    assert agents == [f"User-Agent: nextcloud-mcp-bridge/{__version__}".encode(), b"User-Agent: someone/1"]
