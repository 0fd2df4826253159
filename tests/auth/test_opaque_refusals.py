"""Unknown opaque tokens are bounded per client address (issue 31, finding 13): with
OIDC_OPAQUE_TOKENS=nextcloud each one cost a request to Nextcloud through the pool real users
share. A refusal is remembered by the token's digest, apart from accepted tokens."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.auth import verifier as verifier_module
from nextcloud_mcp_server.auth.oidc import idp_client
from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier, TooManyRefusals
from nextcloud_mcp_server.outbound.client import BoundedClient
from tests.auth.test_verifier import settings

VALID = {"token-of-alice": "alice", "token-of-bob": "bob"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Nextcloud:
    """Who Nextcloud says a token belongs to, counting the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def whoami(self, token: str) -> str | None:
        self.asked.append(token)
        return VALID.get(token)


@pytest.fixture
async def http() -> AsyncIterator[BoundedClient]:
    client = idp_client(settings())  # never used: Nextcloud is asked through `whoami`
    yield client
    await client.aclose()


def make(http: BoundedClient, nextcloud: Nextcloud, clock: Clock, per_minute: int = 5) -> BearerTokenVerifier:
    configured = settings(oidc_opaque_tokens="nextcloud", oidc_opaque_refusals_per_minute=per_minute)
    return BearerTokenVerifier(configured, http, nextcloud_whoami=nextcloud.whoami, clock=clock)


async def test_a_flood_of_unknown_tokens_from_one_address_reaches_nextcloud_only_five_times(
    http: BoundedClient,
) -> None:
    nextcloud, clock = Nextcloud(), Clock()
    verifier = make(http, nextcloud, clock)
    refused, throttled = 0, []
    for _ in range(300):
        try:
            assert await verifier.verify_token(secrets.token_urlsafe(24), address="198.51.100.66") is None
            refused += 1
        except TooManyRefusals as exc:
            throttled.append(exc.retry_after)
    assert (refused, len(throttled), len(nextcloud.asked)) == (5, 295, 5)
    assert set(throttled) == {60}
    # another address is not affected, nor a valid token from it
    assert await verifier.verify_token("token-of-alice", address="203.0.113.1") is not None
    clock.now += 61  # a minute later the address gets its budget back
    assert await verifier.verify_token(secrets.token_urlsafe(24), address="198.51.100.66") is None
    assert len(nextcloud.asked) == 7


async def test_valid_tokens_do_not_use_up_the_budget(http: BoundedClient) -> None:
    nextcloud, clock = Nextcloud(), Clock()
    verifier = make(http, nextcloud, clock, per_minute=1)
    for _ in range(3):
        clock.now += 61  # past the cache: each check asks Nextcloud again
        assert await verifier.verify_token("token-of-alice", address="203.0.113.1") is not None
        assert await verifier.verify_token("token-of-bob", address="203.0.113.1") is not None
    assert len(nextcloud.asked) == 6


async def test_a_refused_token_is_remembered_by_its_digest_only(http: BoundedClient) -> None:
    nextcloud, clock = Nextcloud(), Clock()
    verifier = make(http, nextcloud, clock)
    for _ in range(10):
        assert await verifier.verify_token("stolen-or-expired", address="203.0.113.1") is None
    assert nextcloud.asked == ["stolen-or-expired"]
    assert not any("stolen-or-expired" in key for key in verifier._refused._items)


async def test_a_flood_of_refusals_does_not_push_accepted_tokens_out_of_the_cache(
    http: BoundedClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verifier_module, "MAX_CACHED", 10)
    nextcloud, clock = Nextcloud(), Clock()
    verifier = make(http, nextcloud, clock)
    assert await verifier.verify_token("token-of-alice", address="203.0.113.1") is not None
    for i in range(50):
        assert await verifier.verify_token(secrets.token_urlsafe(24), address=f"198.51.100.{i}") is None
    asked = len(nextcloud.asked)
    assert await verifier.verify_token("token-of-alice", address="203.0.113.1") is not None
    assert len(nextcloud.asked) == asked  # still cached


async def test_without_an_address_nothing_is_throttled(http: BoundedClient) -> None:
    """The SDK's own backend passes no address: the old behaviour, unbounded."""
    nextcloud, clock = Nextcloud(), Clock()
    verifier = make(http, nextcloud, clock, per_minute=1)
    for _ in range(3):
        assert await verifier.verify_token(secrets.token_urlsafe(24)) is None
    assert len(nextcloud.asked) == 3
