"""Limits at the HTTP front, attacked the way issue 13 did: many sessions from one user, slow
headers and bodies (slowloris), too many connections, oversized requests.

Servers run in-process with the same uvicorn options as `run --transport http`. Different users
in single-user mode are told apart by their address: 127.0.0.2 is a second loopback address."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.web.front import uvicorn_options
from tests.mcp_clients import INITIALIZE, MCP_HEADERS
from tests.nextcloud_double.server import serve_in_thread

pytestmark = pytest.mark.integration


@contextmanager
def front(settings: Settings, **limits: object) -> Iterator[str]:
    """The server with these limits; new sessions are not rate-limited unless a test says so."""
    configured = settings.model_copy(update={"mcp_session_opens_per_minute": 60_000, **limits})
    with serve_in_thread(create_app(configured), **uvicorn_options(configured)) as base:
        yield base


def client(address: str = "127.0.0.1") -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


def open_session(http: httpx.Client, base: str) -> httpx.Response:
    return http.post(f"{base}/mcp", json=INITIALIZE, headers=MCP_HEADERS)


def session_id(answer: httpx.Response) -> str:
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


def ping(http: httpx.Client, base: str, sid: str) -> int:
    body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    return http.post(f"{base}/mcp", json=body, headers=headers).status_code


@contextmanager
def busy(http: httpx.Client, base: str, sid: str) -> Iterator[None]:
    """Keep a session in use: its standalone GET stream stays open."""
    headers = {"Accept": "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    with http.stream("GET", f"{base}/mcp", headers=headers) as answer:
        assert answer.status_code == 200
        yield


def closed_by_server(sock: socket.socket, within: float = 20.0) -> bool:
    """True when the server closes the connection before the deadline (reads until EOF)."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


def raw(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


# --- sessions


def test_a_user_at_the_session_limit_loses_their_longest_idle_session(settings: Settings) -> None:
    with front(settings, mcp_max_sessions_per_user=3) as base, client() as http:
        first, second, third = (session_id(open_session(http, base)) for _ in range(3))
        assert ping(http, base, first) == 200  # first is now the most recently active
        fourth = session_id(open_session(http, base))
        assert ping(http, base, second) == 404  # the longest idle one was ended
        assert [ping(http, base, s) for s in (first, third, fourth)] == [200, 200, 200]


def test_a_user_whose_sessions_are_all_busy_is_refused_and_others_are_not(settings: Settings) -> None:
    with (
        front(settings, mcp_max_sessions_per_user=2) as base,
        client() as alice,
        client("127.0.0.2") as bob,
        ExitStack() as streams,
    ):
        for _ in range(2):
            streams.enter_context(busy(alice, base, session_id(open_session(alice, base))))
        refused = open_session(alice, base)
        assert refused.status_code == 429
        message = refused.json()["error"]["message"]
        assert "at most 2" in message
        assert "MCP_MAX_SESSIONS_PER_USER" in message
        assert refused.headers["retry-after"]
        assert open_session(bob, base).status_code == 200


def test_the_global_session_limit_refuses_with_a_clear_answer(settings: Settings) -> None:
    with (
        front(settings, mcp_max_sessions_per_user=5, mcp_max_sessions=3) as base,
        client() as alice,
        client("127.0.0.2") as bob,
    ):
        for _ in range(3):
            session_id(open_session(alice, base))
        refused = open_session(bob, base)
        assert refused.status_code == 503
        assert "MCP_MAX_SESSIONS" in refused.json()["error"]["message"]


def test_a_deleted_session_frees_its_slot(settings: Settings) -> None:
    with front(settings, mcp_max_sessions_per_user=1) as base, client() as http, ExitStack() as streams:
        sid = session_id(open_session(http, base))
        streams.enter_context(busy(http, base, sid))
        assert open_session(http, base).status_code == 429
        streams.close()
        headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        assert http.delete(f"{base}/mcp", headers=headers).status_code == 200
        assert open_session(http, base).status_code == 200


# --- slow clients


def test_a_connection_that_never_finishes_its_headers_is_closed(settings: Settings) -> None:
    with front(settings, mcp_header_timeout_seconds=0.5) as base:
        with raw(base) as sock, raw(base) as silent:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            assert closed_by_server(sock)
            assert closed_by_server(silent)
        # A client that sends its request normally is served.
        assert httpx.get(f"{base}/health").status_code == 200


def test_a_kept_alive_connection_that_stalls_in_its_second_request_is_closed(settings: Settings) -> None:
    with front(settings, mcp_header_timeout_seconds=0.5) as base, raw(base) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in sock.recv(4096)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127")
        assert closed_by_server(sock)


def test_a_body_that_never_completes_is_cut_off(settings: Settings) -> None:
    with front(settings, mcp_body_timeout_seconds=0.5) as base, raw(base) as sock:
        head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        sock.sendall(f"{head}Content-Length: 1000\r\n\r\n{{".encode())
        assert closed_by_server(sock)


def test_connections_over_the_limit_are_turned_away(settings: Settings) -> None:
    with front(settings, mcp_max_connections=2, mcp_header_timeout_seconds=60) as base:
        holders = [raw(base) for _ in range(2)]
        try:
            assert httpx.get(f"{base}/health").status_code == 503
        finally:
            for sock in holders:
                sock.close()


# --- request size


def test_headers_over_the_bound_get_431_and_the_connection_closed(settings: Settings) -> None:
    line = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    many = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(20))  # 20 KiB, complete
    with front(settings) as base:
        endless = [line + b"X-Endless: " + b"a" * 10_000, b"a" * 10_000]  # one line, never ended
        for attack in ([line + many + b"\r\n"], endless):
            with raw(base) as sock:
                for part in attack:
                    sock.sendall(part)
                answer = sock.recv(4096)
                assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
                assert b"16 KiB" in answer
                assert closed_by_server(sock)
        # Headers just under the bound are served.
        with raw(base) as sock:
            sock.sendall(line + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(15)) + b"\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")


def test_an_oversized_request_says_the_limit_and_what_to_do(settings: Settings) -> None:
    big = {**INITIALIZE, "params": {**INITIALIZE["params"], "pad": "x" * 100_000}}  # type: ignore[dict-item]
    with front(settings, mcp_max_request_bytes=64 * 1024) as base, client() as http:
        declared = http.post(f"{base}/mcp", json=big, headers=MCP_HEADERS)
        streamed = http.post(
            f"{base}/mcp",
            content=iter([json.dumps(big).encode()[i : i + 8192] for i in range(0, 100_016, 8192)]),
            headers=MCP_HEADERS,
        )
    for answer in (declared, streamed):
        assert answer.status_code == 413
        message = answer.json()["error"]["message"]
        assert "64 KiB" in message
        assert "MCP_MAX_REQUEST_BYTES" in message
        assert "nc_notes_append_content" in message
    assert "This request is" in declared.json()["error"]["message"]


def test_a_user_opening_sessions_too_fast_is_slowed_down_and_others_are_not(settings: Settings) -> None:
    limits = {"mcp_max_sessions_per_user": 3, "mcp_session_opens_per_minute": 1}
    with front(settings, **limits) as base, client() as alice, client("127.0.0.2") as bob:
        burst = [open_session(alice, base).status_code for _ in range(3)]
        refused = open_session(alice, base)
        assert burst == [200, 200, 200]
        assert refused.status_code == 429
        assert "MCP_SESSION_OPENS_PER_MINUTE" in refused.json()["error"]["message"]
        assert refused.headers["retry-after"] == "60"
        assert open_session(bob, base).status_code == 200
