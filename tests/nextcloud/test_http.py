"""Unit tests of the pooled HTTP client's error paths (http_mock fakes the transport)."""

from __future__ import annotations

import asyncio

import pytest

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential
from nextcloud_mcp_server.nextcloud.errors import (
    Forbidden,
    InvalidInput,
    InvalidResponse,
    NextcloudHTTPError,
    NextcloudTimeout,
    NextcloudUnreachable,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.outbound.errors import AnswerStalled, ExchangeFailed
from tests import http_mock

BASE = "https://cloud.example.com"
ALICE = BasicCredential("alice", "alice-app-password")


class Sleeps:
    """Records the delays the client asked for instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def http(sleeps: Sleeps) -> NextcloudHTTP:
    client = NextcloudHTTP(BASE, max_retries=2, backoff=0.5, max_retry_after=10, sleep=sleeps)
    yield client  # type: ignore[misc]
    await client.aclose()


@http_mock.mock
async def test_get_is_retried_on_503_and_the_third_answer_is_returned(
    http: NextcloudHTTP, sleeps: Sleeps
) -> None:
    """Two 503s, then 200: the caller sees the 200; backoff grows and stays within its window."""
    route = http_mock.get(f"{BASE}/status.php").mock(
        side_effect=[
            http_mock.Response(503),
            http_mock.Response(503),
            http_mock.Response(200, json={"ok": True}),
        ]
    )
    response = await http.request("GET", "/status.php", credential=None)
    assert response.json() == {"ok": True}
    assert route.call_count == 3
    assert len(sleeps.delays) == 2
    assert 0 <= sleeps.delays[0] <= 0.5
    assert 0 <= sleeps.delays[1] <= 1.0


@http_mock.mock
async def test_a_locked_read_is_retried_and_a_locked_post_is_not(http: NextcloudHTTP, sleeps: Sleeps) -> None:
    """Nextcloud's Notes API answers concurrent requests of one user with 423 LockedException: a
    GET is sent again, a POST (which may have done its work) is not."""
    locked = http_mock.Response(423, json={"errorType": "OCP\\Lock\\LockedException"})
    reads = http_mock.get(f"{BASE}/notes").mock(side_effect=[locked, http_mock.Response(200, json=[])])
    assert (await http.request("GET", "/notes", credential=ALICE)).json() == []
    assert reads.call_count == 2
    assert len(sleeps.delays) == 1
    writes = http_mock.post(f"{BASE}/notes").mock(return_value=locked)
    with pytest.raises(NextcloudHTTPError, match="locked"):
        await http.request("POST", "/notes", credential=ALICE, json={"title": "x"})
    assert writes.call_count == 1


@http_mock.mock
async def test_retry_after_is_honoured_on_429(http: NextcloudHTTP, sleeps: Sleeps) -> None:
    """A 429 with `Retry-After: 3` waits at least three seconds before the retry."""
    http_mock.get(f"{BASE}/x").mock(
        side_effect=[http_mock.Response(429, headers={"Retry-After": "3"}), http_mock.Response(200)]
    )
    await http.request("GET", "/x", credential=None)
    assert sleeps.delays[0] >= 3


@http_mock.mock
async def test_a_retry_after_beyond_the_limit_is_not_waited_for(http: NextcloudHTTP, sleeps: Sleeps) -> None:
    """Retry-After of an hour: no retry, a RateLimited error carrying the hint."""
    http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(429, headers={"Retry-After": "3600"}))
    with pytest.raises(RateLimited) as caught:
        await http.request("GET", "/x", credential=None)
    assert caught.value.retry_after == 3600
    assert sleeps.delays == []


@http_mock.mock
async def test_retries_run_out_and_the_last_status_is_raised(http: NextcloudHTTP, sleeps: Sleeps) -> None:
    """Three 503s with two retries allowed end in a ServerError naming the status."""
    route = http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(503))
    with pytest.raises(ServerError, match="HTTP 503"):
        await http.request("GET", "/x", credential=None)
    assert route.call_count == 3


@http_mock.mock
async def test_post_is_never_retried(http: NextcloudHTTP, sleeps: Sleeps) -> None:
    """A POST answered 503 fails at once: it may have been applied, so it is not sent again."""
    route = http_mock.post(f"{BASE}/notes").mock(return_value=http_mock.Response(503))
    with pytest.raises(ServerError):
        await http.request("POST", "/notes", credential=ALICE, json={})
    assert route.call_count == 1
    assert sleeps.delays == []


@http_mock.mock
async def test_a_reset_connection_is_retried_for_idempotent_requests(http: NextcloudHTTP) -> None:
    """A connection reset before the answer on a GET is retried once and succeeds."""
    route = http_mock.get(f"{BASE}/x").mock(
        side_effect=[ExchangeFailed("the server closed the connection"), http_mock.Response(200, text="ok")]
    )
    assert (await http.request("GET", "/x", credential=None)).text == "ok"
    assert route.call_count == 2


@http_mock.mock
async def test_a_reset_connection_on_post_is_reported_not_retried(http: NextcloudHTTP) -> None:
    """The same reset on a POST becomes NextcloudUnreachable after one attempt."""
    route = http_mock.post(f"{BASE}/x").mock(side_effect=ExchangeFailed("the connection was reset"))
    with pytest.raises(NextcloudUnreachable, match="cloud.example.com"):
        await http.request("POST", "/x", credential=None)
    assert route.call_count == 1


@http_mock.mock
async def test_timeout_becomes_nextcloud_timeout(http: NextcloudHTTP) -> None:
    """A read timeout is not retried and names the host."""
    route = http_mock.get(f"{BASE}/x").mock(side_effect=AnswerStalled("slow"))
    with pytest.raises(
        NextcloudTimeout, match="Nextcloud at cloud.example.com: no answer within the timeout"
    ):
        await http.request("GET", "/x", credential=None)
    assert route.call_count == 1


async def test_connection_refused_is_named(sleeps: Sleeps) -> None:
    """A port nobody listens on: the cause is found in aiohttp's error, and the request, which
    never left, was retried like any request that was never sent."""
    listener = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    listener.close()
    await listener.wait_closed()
    http = NextcloudHTTP(f"http://127.0.0.1:{port}", max_retries=2, sleep=sleeps)
    try:
        with pytest.raises(NextcloudUnreachable, match=f"Nextcloud at 127.0.0.1:{port}: connection refused"):
            await http.request("POST", "/x", credential=None, content=b"{}")
    finally:
        await http.aclose()
    assert len(sleeps.delays) == 2


@pytest.mark.parametrize(
    ("status", "error", "text"),
    [
        (401, Unauthorized, "credentials were rejected"),
        (403, Forbidden, "forbidden"),
        (404, NotFound, "not found"),
        (500, ServerError, "failed with HTTP 500"),
        (507, ServerError, "storage is full"),
    ],
)
@http_mock.mock
async def test_statuses_map_to_typed_errors(
    http: NextcloudHTTP, status: int, error: type[Exception], text: str
) -> None:
    """Each status the API can answer becomes its own error type with a readable sentence."""
    http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(status, text="body"))
    with pytest.raises(error, match=text):
        await http.request("GET", "/x", credential=ALICE)


@http_mock.mock
async def test_a_redirect_is_an_error_that_points_at_the_configuration(http: NextcloudHTTP) -> None:
    """A 302 (e.g. to a login page or another host) is not followed: the message says where to."""
    http_mock.get(f"{BASE}/x").mock(
        return_value=http_mock.Response(302, headers={"Location": "https://other/login"})
    )
    with pytest.raises(
        Exception, match=r"redirected \(HTTP 302\) to https://other/login; set NEXTCLOUD_HOST"
    ):
        await http.request("GET", "/x", credential=ALICE)


@http_mock.mock
async def test_malformed_json_is_an_invalid_response(http: NextcloudHTTP) -> None:
    """An HTML page where JSON was promised becomes InvalidResponse naming the content type."""
    http_mock.get(f"{BASE}/x").mock(
        return_value=http_mock.Response(200, text="<html>", headers={"Content-Type": "text/html"})
    )
    response = await http.request("GET", "/x", credential=ALICE)
    with pytest.raises(InvalidResponse, match="expected JSON but got text/html"):
        json_body(response, http.host)


@http_mock.mock
async def test_each_request_carries_its_own_users_credential(http: NextcloudHTTP) -> None:
    """One pool, two users: each request is sent with the credential it was made for."""
    route = http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(200))
    await http.request("GET", "/x", credential=ALICE)
    await http.request("GET", "/x", credential=BearerCredential("tok-of-bob", "bob"))
    await http.request("GET", "/x", credential=None)
    sent = [call.request.headers.get("authorization") for call in route.calls]
    assert sent == [ALICE.authorization(), "Bearer tok-of-bob", None]


@http_mock.mock
async def test_cookies_nextcloud_sets_are_never_sent_back(http: NextcloudHTTP) -> None:
    """Nextcloud answers with session and remember-me cookies; a shared pool must not carry one
    user's session into the next user's request."""
    session = "ocabc123=s3ss10n; path=/; secure; HttpOnly; SameSite=Lax"
    route = http_mock.get(f"{BASE}/x").mock(
        return_value=http_mock.Response(
            200, headers=[("Set-Cookie", session), ("Set-Cookie", "nc_username=alice; path=/")]
        )
    )
    await http.request("GET", "/x", credential=ALICE)
    await http.request("GET", "/x", credential=BearerCredential("tok-of-bob", "bob"))
    assert [call.request.headers.get("cookie") for call in route.calls] == [None, None]


def test_credentials_never_show_their_secret_in_repr() -> None:
    """A credential printed by accident (a log line, a traceback) shows no secret."""
    assert "alice-app-password" not in repr(ALICE)
    assert "tok-of-bob" not in repr(BearerCredential("tok-of-bob", "bob"))


async def test_a_header_with_a_line_break_is_invalid_input_and_never_sent() -> None:
    """An ETag a model passes back is sent in If-Match: one with a line break must not add a
    header of its own to the request (the transport refuses it; no request leaves)."""
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(65536))  # not reached: no connection is even opened
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    http = NextcloudHTTP(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}", max_retries=0)
    try:
        with pytest.raises(InvalidInput, match="line break"):
            await http.request(
                "PUT", "/a", credential=ALICE, headers={"If-Match": '"x"\r\nX-Evil: 1'}, content=b"z"
            )
    finally:
        await http.aclose()
        listener.close()
        await listener.wait_closed()
    assert received == []


@http_mock.mock
async def test_requests_name_this_server_by_its_own_distribution(http: NextcloudHTTP) -> None:
    """Administrators tell this server from the PyPI package `nextcloud-mcp-server` in Nextcloud's
    logs: every request says `nextcloud-mcp-bridge/<version>`."""
    route = http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(200))
    await http.request("GET", "/x", credential=ALICE)
    assert route.calls[0].request.headers.get("user-agent") == f"nextcloud-mcp-bridge/{__version__}"
