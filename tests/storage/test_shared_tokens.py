"""One Nextcloud access token per user for every replica (ADR 0063): minted once per lifetime
under the refresh lock, read by the other replicas, bound to the grant it came from, sealed, and
deleted with the grant."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.consent_providers import GrantRefused, Minted
from nextcloud_mcp_server.auth.offline import OfflineCredentials
from nextcloud_mcp_server.nextcloud.auth import BearerCredential, Credential
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.postgres import PostgresStore
from nextcloud_mcp_server.storage.records import ConsentState, Elicitation
from nextcloud_mcp_server.storage.store import ConsentStore, Grant, SQLiteStore
from tests.postgres import PostgresCluster

KEY = generate_key()
LIFETIME = 3600.0


class RotatingNextcloud:
    """Nextcloud's OAuth2 app as a provider: every refresh rotates the refresh token and the old
    one is refused from then on (as Nextcloud does: a second refresh with it breaks the grant)."""

    name = "nextcloud-oauth2"

    def __init__(self) -> None:
        self.valid: dict[str, str] = {}
        self.refreshes: Counter[str] = Counter()
        self.refused = 0

    async def begin(self, elicitation: Elicitation) -> str:
        raise NotImplementedError

    async def finish(self, consent: ConsentState, expected_user: str, params: object) -> Grant:
        raise NotImplementedError

    async def mint(self, grant: Grant) -> Minted:
        if self.valid.get(grant.subject) != grant.secret:
            self.refused += 1
            raise GrantRefused("invalid_grant")
        await asyncio.sleep(0.01)  # the token endpoint takes its time: callers overlap
        self.refreshes[grant.subject] += 1
        count = self.refreshes[grant.subject]
        self.valid[grant.subject] = f"rt-{grant.subject}-{count}"
        token = BearerCredential(f"at-{grant.subject}-{count}", grant.user_id, basic_for_notes=True)
        return Minted(token, LIFETIME, self.valid[grant.subject])

    async def revoke(self, grant: Grant) -> bool:
        return False


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def caller(user: str) -> Caller:
    return Caller(subject=user, user_id=user, scopes=frozenset(), token="")


@pytest.fixture
def pg_url(postgres: PostgresCluster) -> Iterator[str]:
    with postgres.database() as url:
        yield url


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "store.sqlite3", Cipher([KEY]))
    await store.open()
    yield store
    await store.close()


async def grant(store: ConsentStore, nextcloud: RotatingNextcloud, user: str) -> None:
    nextcloud.valid[user] = f"rt-{user}-0"
    await store.save_grant(Grant(user, user, nextcloud.name, "refresh_token", nextcloud.valid[user]))


async def test_two_replicas_refresh_once_per_token_lifetime_and_share_the_token(pg_url: str) -> None:
    """Two replicas, twenty calls each at once for each of three users: Nextcloud is asked once per
    user per lifetime, and every call of both replicas carries the token that refresh made."""
    clock, nextcloud = Clock(), RotatingNextcloud()
    stores = [PostgresStore(pg_url, Cipher([KEY]), clock=clock) for _ in range(2)]
    for store in stores:
        await store.open()
    try:
        replicas = [OfflineCredentials(store, {nextcloud.name: nextcloud}, clock=clock) for store in stores]
        users = ["alice", "bob", "carol"]
        for user in users:
            await grant(stores[0], nextcloud, user)

        async def everyone_calls() -> list[tuple[str, Credential]]:
            calls = [(user, replica) for user in users for replica in replicas for _ in range(20)]
            got = await asyncio.gather(*(replica.credential_for(caller(user)) for user, replica in calls))
            return [(user, credential) for (user, _), credential in zip(calls, got, strict=True)]

        for lifetime in (1, 2, 3):
            used = await everyone_calls()
            assert dict(nextcloud.refreshes) == dict.fromkeys(users, lifetime)
            assert nextcloud.refused == 0
            for user, credential in used:
                assert isinstance(credential, BearerCredential)
                assert credential.token == f"at-{user}-{lifetime}"
            clock.now += LIFETIME  # every token falls due
        for user in users:  # the last rotated refresh token is the stored one
            stored = await stores[1].get_grant(user)
            assert stored is not None
            assert stored.secret == nextcloud.valid[user]
    finally:
        for store in stores:
            await store.close()


async def test_a_replica_that_starts_later_uses_the_token_already_minted(sqlite_store: SQLiteStore) -> None:
    clock, nextcloud = Clock(), RotatingNextcloud()
    await grant(sqlite_store, nextcloud, "alice")
    first = OfflineCredentials(sqlite_store, {nextcloud.name: nextcloud}, clock=clock)
    minted = await first.credential_for(caller("alice"))
    later = OfflineCredentials(sqlite_store, {nextcloud.name: nextcloud}, clock=clock)
    assert await later.credential_for(caller("alice")) == minted
    assert nextcloud.refreshes["alice"] == 1
    assert later.refreshes["alice"] == 0


async def test_the_shared_token_is_sealed_bound_to_its_grant_and_deleted_with_it(
    sqlite_store: SQLiteStore,
) -> None:
    clock, nextcloud = Clock(), RotatingNextcloud()
    await grant(sqlite_store, nextcloud, "alice")
    replica = OfflineCredentials(sqlite_store, {nextcloud.name: nextcloud}, clock=clock)
    await replica.credential_for(caller("alice"))
    with sqlite3.connect(sqlite_store.path) as db:
        (sealed,) = db.execute("SELECT credential FROM access_tokens").fetchone()
    assert "at-alice" not in sealed  # encrypted at rest

    # A new consent replaces the grant: the token minted from the old one is not handed out.
    await grant(sqlite_store, nextcloud, "alice")
    assert await sqlite_store.access_tokens.get("alice") is None
    fresh = OfflineCredentials(sqlite_store, {nextcloud.name: nextcloud}, clock=clock)
    await fresh.credential_for(caller("alice"))
    assert nextcloud.refreshes["alice"] == 2

    await sqlite_store.delete_grant("alice")
    with sqlite3.connect(sqlite_store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM access_tokens").fetchone() == (0,)


async def test_a_token_for_a_grant_version_that_is_gone_is_not_kept(sqlite_store: SQLiteStore) -> None:
    await sqlite_store.save_grant(Grant("alice", "alice", "nextcloud-oauth2", "refresh_token", "rt"))
    assert not await sqlite_store.access_tokens.put("alice", 7, "{}", 2e9)
    assert not await sqlite_store.access_tokens.put("bob", 1, "{}", 2e9)
    assert await sqlite_store.access_tokens.put("alice", 1, "{}", 2e9)
