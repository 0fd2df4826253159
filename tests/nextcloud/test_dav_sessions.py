"""Nextcloud's WebDAV session sent back per app password (docs/ADR/0106): only to the credential
it was given to, only below /remote.php/, dropped when Nextcloud no longer takes it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential
from nextcloud_mcp_server.nextcloud.dav_sessions import MAX_COOKIES, DavSessions
from nextcloud_mcp_server.nextcloud.errors import Unauthorized
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from tests import http_mock
from tests.backends import Nextcloud

BASE = "https://cloud.example.com"
DAV = f"{BASE}/remote.php/dav/files/alice/"
ALICE = BasicCredential("alice", "alice-app-password")
BOB = BasicCredential("bob", "bob-app-password")
SESSION = [
    ("Set-Cookie", "oc1abc=s3ss10n; path=/; HttpOnly; SameSite=Lax"),
    ("Set-Cookie", "oc_sessionPassphrase=p4ss; path=/; HttpOnly"),
]


@pytest.fixture
async def http() -> AsyncIterator[NextcloudHTTP]:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client
    await client.aclose()


def _cookies(route: http_mock.Route) -> list[str | None]:
    return [call.request.headers.get("cookie") for call in route.calls]


@http_mock.mock
async def test_the_session_goes_back_with_the_same_app_password_only(http: NextcloudHTTP) -> None:
    route = http_mock.request("PROPFIND", DAV).mock(return_value=http_mock.Response(207, headers=SESSION))
    for credential in (ALICE, ALICE, BOB, BearerCredential("tok", "alice"), ALICE):
        await http.request("PROPFIND", DAV, credential=credential)
    session = "oc1abc=s3ss10n; oc_sessionPassphrase=p4ss"
    # bob gets his own (the mock hands him the same values: what matters is he had none first)
    assert _cookies(route) == [None, session, None, None, session]
    assert len(http.dav_sessions) == 2  # alice's and bob's; never a Bearer token's


@http_mock.mock
async def test_other_apis_neither_get_nor_give_a_session(http: NextcloudHTTP) -> None:
    """A Notes API or OCS answer's cookies are not kept, and a WebDAV session is not sent there:
    Nextcloud turns a WebDAV session used by the Notes API into one WebDAV refuses."""
    notes = http_mock.get(f"{BASE}/index.php/apps/notes/api/v1/notes").mock(
        return_value=http_mock.Response(200, json=[], headers=SESSION)
    )
    dav = http_mock.request("PROPFIND", DAV).mock(return_value=http_mock.Response(207, headers=SESSION))
    await http.request("GET", "/index.php/apps/notes/api/v1/notes", credential=ALICE)
    await http.request("PROPFIND", DAV, credential=ALICE)
    await http.request("GET", "/index.php/apps/notes/api/v1/notes", credential=ALICE)
    assert _cookies(notes) == [None, None]
    assert _cookies(dav) == [None]


@http_mock.mock
async def test_the_session_of_who_the_user_is_serves_webdav_and_goes_nowhere_else(
    http: NextcloudHTTP,
) -> None:
    """OCS `cloud/user` (the discovery a new process makes first) gives its session to the
    credential's WebDAV requests (docs/ADR/0112); no OCS request is sent one, and another OCS
    answer, or one to a Bearer token, gives none."""
    user = http_mock.get(f"{BASE}/ocs/v2.php/cloud/user").mock(
        return_value=http_mock.Response(
            200, json={"ocs": {"meta": {}, "data": {"id": "alice"}}}, headers=SESSION
        )
    )
    other = http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(
        return_value=http_mock.Response(200, json={"ocs": {"meta": {}, "data": {}}}, headers=SESSION)
    )
    dav = http_mock.request("PROPFIND", DAV).mock(return_value=http_mock.Response(207))
    await OCSClient(http, BOB).request("GET", "cloud/capabilities")
    await http.request("PROPFIND", DAV, credential=BOB)
    bearer = BearerCredential("tok", "alice")
    assert (await OCSClient(http, bearer).current_user()).id == "alice"
    await http.request("PROPFIND", DAV, credential=bearer)
    assert (await OCSClient(http, ALICE).current_user()).id == "alice"
    await http.request("PROPFIND", DAV, credential=ALICE)
    await OCSClient(http, ALICE).current_user()
    assert _cookies(dav) == [None, None, "oc1abc=s3ss10n; oc_sessionPassphrase=p4ss"]
    assert _cookies(user) == [None, None, None]
    assert _cookies(other) == [None]
    assert len(http.dav_sessions) == 1


@http_mock.mock
async def test_a_webdav_post_goes_without_the_session(http: NextcloudHTTP) -> None:
    """Nextcloud's WebDAV asks a POST that comes with a session for a CSRF token (and ends the
    session without one): a POST (bulk upload) is sent with the app password alone."""
    http_mock.request("PROPFIND", DAV).mock(return_value=http_mock.Response(207, headers=SESSION))
    bulk = http_mock.post(f"{BASE}/remote.php/dav/bulk").mock(return_value=http_mock.Response(200, json=[]))
    await http.request("PROPFIND", DAV, credential=ALICE)
    await http.request("POST", "/remote.php/dav/bulk", credential=ALICE, content=b"x")
    assert _cookies(bulk) == [None]
    assert len(http.dav_sessions) == 1


@http_mock.mock
async def test_a_session_nextcloud_refuses_is_forgotten_and_the_request_sent_once_more(
    http: NextcloudHTTP,
) -> None:
    route = http_mock.request("PROPFIND", DAV).mock(
        side_effect=[
            http_mock.Response(207, headers=SESSION),
            http_mock.Response(401),
            http_mock.Response(207),
            http_mock.Response(207),
        ]
    )
    await http.request("PROPFIND", DAV, credential=ALICE)
    await http.request("PROPFIND", DAV, credential=ALICE)  # 401 with the session, 207 without
    await http.request("PROPFIND", DAV, credential=ALICE)
    assert _cookies(route) == [None, "oc1abc=s3ss10n; oc_sessionPassphrase=p4ss", None, None]
    assert len(http.dav_sessions) == 0


@http_mock.mock
async def test_a_revoked_app_password_is_refused_not_retried_forever(http: NextcloudHTTP) -> None:
    route = http_mock.request("PROPFIND", DAV).mock(
        side_effect=[
            http_mock.Response(207, headers=SESSION),
            http_mock.Response(401),
            http_mock.Response(401),
        ]
    )
    await http.request("PROPFIND", DAV, credential=ALICE)
    with pytest.raises(Unauthorized):
        await http.request("PROPFIND", DAV, credential=ALICE)
    assert route.call_count == 3


@http_mock.mock
async def test_a_streamed_upload_goes_without_the_session(http: NextcloudHTTP) -> None:
    """A body that cannot be sent twice could not be sent again without a refused session."""
    route = http_mock.request("PROPFIND", DAV).mock(return_value=http_mock.Response(207, headers=SESSION))
    upload = http_mock.put(f"{DAV}big.bin").mock(return_value=http_mock.Response(201))
    await http.request("PROPFIND", DAV, credential=ALICE)

    async def parts() -> AsyncIterator[bytes]:
        yield b"part"

    async with http.stream("PUT", f"{DAV}big.bin", credential=ALICE, content=parts()):
        pass
    assert route.call_count == 1
    assert _cookies(upload) == [None]


def test_a_cookie_set_to_expire_is_dropped() -> None:
    sessions = DavSessions()
    sessions.learn("Basic x", ["oc1=a; path=/", "nc_username=alice; path=/"])
    sessions.learn("Basic x", ["oc1=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0"])
    sessions.learn("Basic x", ["nc_username=alice; expires=Thu, 01 Jan 1970 00:00:01 GMT"])
    assert sessions.cookie_header("Basic x") is None
    assert len(sessions) == 0


@pytest.mark.parametrize(
    "set_cookie",
    [
        "oc1=" + "a" * 600,  # too long to be a session id
        'oc1="quoted;value"',  # would split the Cookie header
        "oc1=with\x7fdelete",
        "=nameless",
        "not a cookie at all; ;;",
    ],
)
def test_a_hostile_or_odd_cookie_is_not_kept(set_cookie: str) -> None:
    sessions = DavSessions()
    sessions.learn("Basic x", [set_cookie])
    assert sessions.cookie_header("Basic x") is None


def test_a_credential_keeps_a_few_cookies_and_the_least_recent_credentials_go_first() -> None:
    sessions = DavSessions(capacity=3)
    sessions.learn("Basic a", [f"c{i}=v{i}" for i in range(3 * MAX_COOKIES)])
    assert (sessions.cookie_header("Basic a") or "").count("=") == MAX_COOKIES
    for name in ("b", "c"):
        sessions.learn(f"Basic {name}", ["oc1=s"])
    sessions.cookie_header("Basic a")  # a is used again: b is now the least recent
    sessions.learn("Basic d", ["oc1=s"])
    assert len(sessions) == 3
    assert sessions.cookie_header("Basic b") is None
    assert sessions.cookie_header("Basic a") is not None


async def test_the_real_nextcloud_serves_one_session_and_refuses_it_once_revoked(
    each_real_nextcloud: Nextcloud,
) -> None:
    """On the real 29 and 34: six WebDAV requests with one app password leave one PHP session
    where each would have made its own, as do `cloud/user` and three WebDAV requests after it, and
    once the app password is revoked the next request is refused (the kept session does not
    outlive the credential)."""
    nc = each_real_nextcloud
    assert nc.instance is not None
    sessions_dir = nc.instance.dir / "run" / "sessions"
    alice = BasicCredential(nc.alice.user, nc.alice.app_password)
    home = f"/remote.php/dav/files/{nc.alice.user}/"
    http = NextcloudHTTP(nc.url)
    try:
        before = set(sessions_dir.iterdir())
        for _ in range(6):
            await http.request("PROPFIND", home, credential=alice, headers={"Depth": "0"})
        assert len(set(sessions_dir.iterdir()) - before) == 1
        assert len(http.dav_sessions) == 1
        # a new process: who the user is (OCS), then WebDAV in the session that answer opened
        fresh = NextcloudHTTP(nc.url)
        try:
            before = set(sessions_dir.iterdir())
            assert (await OCSClient(fresh, alice).current_user()).id == nc.alice.user
            for _ in range(3):
                await fresh.request("PROPFIND", home, credential=alice, headers={"Depth": "0"})
            assert len(set(sessions_dir.iterdir()) - before) == 1
        finally:
            await fresh.aclose()
        await http.request(
            "DELETE", "/ocs/v2.php/core/apppassword", credential=alice, headers={"OCS-APIRequest": "true"}
        )
        with pytest.raises(Unauthorized):
            await http.request("PROPFIND", home, credential=alice, headers={"Depth": "0"})
        assert len(http.dav_sessions) == 0
    finally:
        await http.aclose()
