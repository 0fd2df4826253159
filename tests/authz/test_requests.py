"""Authorization requests on both stores (a SQLite file, a PostgreSQL database): expiry, single use,
one sign-in, no approval without a signed-in user, and the redirect the client gets."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from nextcloud_mcp_server.authz.db import digest
from nextcloud_mcp_server.authz.requests import NewRequest, RequestUnusable, StoredAuthorizationRequests
from tests.authz.places import Place, place

__all__ = ["place"]  # the fixture, used by name

ISSUER = "https://mcp.example.com"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def requests(place: Place, clock: Clock) -> StoredAuthorizationRequests:
    return StoredAuthorizationRequests(place.db, ISSUER, ttl=600, clock=clock)


NEW = NewRequest(
    client_id="client-1",
    client_name="Some <b>client</b>",
    redirect_uri="https://client.example/cb?keep=1",
    redirect_uri_provided_explicitly=True,
    scopes=("notes:read", "notes:write"),
    resource="https://mcp.example.com/mcp",
    code_challenge="x" * 43,
    state="client-state&odd=1",
)


async def test_a_request_is_found_with_what_the_person_sees(requests: StoredAuthorizationRequests) -> None:
    created = await requests.create(NEW)
    assert len(created.id) >= 43  # 256 bits, URL-safe
    found = await requests.get(created.id)
    assert found == created
    assert found is not None
    assert found.user_id is None
    assert found.scopes == ("notes:read", "notes:write")
    assert await requests.get("nope") is None


async def test_approve_redirects_with_code_state_and_iss(
    requests: StoredAuthorizationRequests, place: Place
) -> None:
    created = await requests.create(NEW)
    bound = await requests.signed_in(created.id, "alice")
    assert bound.user_id == "alice"
    url = await requests.approve(created.id)
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://client.example/cb"
    query = parse_qs(parts.query)
    assert query["keep"] == ["1"]
    assert query["state"] == ["client-state&odd=1"]
    assert query["iss"] == [ISSUER]
    code = query["code"][0]
    [row] = await place.rows(
        "SELECT client_id, subject, resource, scopes, code_challenge FROM authz_codes WHERE code_hash = ?",
        digest(code),
    )
    assert row == (
        "client-1", "alice", NEW.resource, "notes:read notes:write", NEW.code_challenge,
    )  # fmt: skip
    assert await place.rows("SELECT COUNT(*) FROM authz_codes WHERE code_hash = ?", code) == [(0,)]
    assert await requests.get(created.id) is None


async def test_approval_and_decline_are_single_use(requests: StoredAuthorizationRequests) -> None:
    created = await requests.create(NEW)
    await requests.signed_in(created.id, "alice")
    await requests.approve(created.id)
    with pytest.raises(RequestUnusable, match="already answered"):
        await requests.approve(created.id)
    with pytest.raises(RequestUnusable, match="already answered"):
        await requests.decline(created.id)
    other = await requests.create(NEW)
    url = await requests.decline(other.id)
    query = parse_qs(urlsplit(url).query)
    assert query["error"] == ["access_denied"]
    assert query["state"] == [NEW.state]
    assert "code" not in query
    with pytest.raises(RequestUnusable):
        await requests.signed_in(other.id, "alice")
    with pytest.raises(RequestUnusable):
        await requests.approve(other.id)


async def test_signed_in_binds_once(requests: StoredAuthorizationRequests) -> None:
    created = await requests.create(NEW)
    await requests.signed_in(created.id, "alice")
    with pytest.raises(RequestUnusable, match="already signed in"):
        await requests.signed_in(created.id, "mallory")
    found = await requests.get(created.id)
    assert found is not None
    assert found.user_id == "alice"


async def test_approve_without_user_is_refused(requests: StoredAuthorizationRequests) -> None:
    created = await requests.create(NEW)
    with pytest.raises(RequestUnusable, match="Sign in at Nextcloud first"):
        await requests.approve(created.id)
    assert await requests.get(created.id) is not None  # still usable after signing in
    await requests.signed_in(created.id, "alice")
    assert "code=" in await requests.approve(created.id)


async def test_expired_requests_are_unusable(requests: StoredAuthorizationRequests, clock: Clock) -> None:
    created = await requests.create(NEW)
    clock.now += 601
    assert await requests.get(created.id) is None
    with pytest.raises(RequestUnusable, match="expired"):
        await requests.signed_in(created.id, "alice")
    with pytest.raises(RequestUnusable, match="expired"):
        await requests.decline(created.id)
    with pytest.raises(RequestUnusable, match="unknown"):
        await requests.approve("no-such-request")


async def test_a_request_needs_a_scope(requests: StoredAuthorizationRequests) -> None:
    with pytest.raises(ValueError, match="at least one scope"):
        await requests.create(NewRequest(**{**NEW.__dict__, "scopes": ()}))


async def test_expire_forgets_requests_and_codes_a_day_later(
    requests: StoredAuthorizationRequests, place: Place, clock: Clock
) -> None:
    created = await requests.create(NEW)
    await requests.signed_in(created.id, "alice")
    await requests.approve(created.id)
    clock.now += 3600
    await requests.expire()
    counts = "SELECT (SELECT COUNT(*) FROM authz_requests), (SELECT COUNT(*) FROM authz_codes)"
    assert await place.rows(counts) == [(1, 1)]
    clock.now += 86400
    await requests.expire()
    assert await place.rows(counts) == [(0, 0)]
