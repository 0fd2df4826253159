"""The store on both backends (SQLite file, PostgreSQL database): migrations, grants, single-use
consent steps, audit, expiry, key rotation."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.postgres import PostgresStore, postgres_sql
from nextcloud_mcp_server.storage.store import MIGRATIONS, ConsentError, Grant, SQLiteStore, StoreError
from tests.postgres import PostgresCluster

KEY = generate_key()
AnyStore = SQLiteStore | PostgresStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Backend:
    """One place a store lives (a file, a database): stores opened on it, and raw SQL beside them."""

    def __init__(self, name: str, location: str) -> None:
        self.name, self.location = name, location

    def store(self, cipher: Cipher, clock: Callable[[], float] | None = None) -> AnyStore:
        extra: dict[str, Any] = {"clock": clock} if clock else {}
        if self.name == "sqlite":
            return SQLiteStore(Path(self.location), cipher, **extra)
        return PostgresStore(self.location, cipher, **extra)

    def sql(self, statement: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement outside the store (SQLite's `?` placeholders, for both)."""
        if self.name == "sqlite":
            with sqlite3.connect(self.location) as db:
                return db.execute(statement, args).fetchall()
        with psycopg.connect(self.location, autocommit=True) as db:
            cursor = db.execute(statement.replace("?", "%s"), args)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def script(self, migration: str) -> None:
        for statement in filter(str.strip, migration.split(";")):
            self.sql(statement if self.name == "sqlite" else postgres_sql(statement))


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", str(tmp_path / "store.sqlite3"))
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    with cluster.database() as url:
        yield Backend("postgresql", url)


@pytest.fixture
async def store(backend: Backend) -> AnyStore:
    opened = backend.store(Cipher([KEY]), clock=Clock())
    await opened.open()
    yield opened  # type: ignore[misc]
    await opened.close()


async def test_a_new_store_gets_the_current_schema(store: AnyStore, backend: Backend) -> None:
    assert backend.sql("SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
    if backend.name == "sqlite":
        assert backend.sql("PRAGMA journal_mode") == [("wal",)]
    else:  # timestamps keep their fractions of a second (a PostgreSQL REAL would not)
        [(kind,)] = backend.sql(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'grants' "
            "AND column_name = 'updated_at'"
        )
        assert kind == "double precision"


async def test_reopening_does_not_migrate_again_and_a_newer_schema_is_refused(backend: Backend) -> None:
    for _ in range(2):
        store = backend.store(Cipher([KEY]))
        await store.open()
        await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt"))
        await store.close()
    backend.sql("UPDATE schema_version SET version = 99")
    future = backend.store(Cipher([KEY]))
    with pytest.raises(StoreError, match="schema version 99, newer than this server understands"):
        await future.open()
    await future.close()


async def test_grants_are_encrypted_and_replaced_only_by_compare_and_swap(
    store: AnyStore, backend: Backend
) -> None:
    await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-1", "openid"))
    grant = await store.get_grant("alice")
    assert grant is not None
    assert (grant.secret, grant.version) == ("rt-1", 1)
    assert await store.replace_secret("alice", grant.version, "rt-2")
    assert not await store.replace_secret("alice", grant.version, "rt-3")  # someone was faster
    latest = await store.get_grant("alice")
    assert latest is not None
    assert (latest.secret, latest.version) == ("rt-2", 2)
    [(sealed,)] = backend.sql("SELECT secret FROM grants")
    assert "rt-2" not in sealed
    assert "rt-2" not in repr(latest)
    assert await store.delete_grant("alice")
    assert await store.get_grant("alice") is None


async def test_grant_subjects_by_prefix_match_exactly_and_are_bounded(store: AnyStore) -> None:
    for subject in ("p:1:x", "p:2:y", "p%:3", "alice", "P:4"):
        await store.save_grant(Grant(subject, "alice", "login-flow-v2", "app_password", "pw"))
    assert await store.grant_subjects("p:") == ["p:1:x", "p:2:y"]  # no LIKE wildcards, case kept
    assert await store.grant_subjects("p:", limit=1) == ["p:1:x"]
    assert await store.grant_subjects("nobody") == []


async def test_an_elicitation_link_opens_once_while_pending_and_unexpired(store: AnyStore) -> None:
    clock: Clock = store._clock  # type: ignore[assignment]
    elicitation = await store.create_elicitation("alice", ttl=300)
    opened = await store.open_elicitation(elicitation.id)
    assert opened.opened_at == clock.now
    with pytest.raises(ConsentError, match="already used"):
        await store.open_elicitation(elicitation.id)
    late = await store.create_elicitation("alice", ttl=300)
    clock.now += 301
    with pytest.raises(ConsentError, match="expired"):
        await store.open_elicitation(late.id)
    with pytest.raises(ConsentError, match="unknown"):
        await store.open_elicitation("nope")
    finished = await store.create_elicitation("alice", ttl=300)
    await store.finish_elicitation(finished.id, "failed", "declined")
    with pytest.raises(ConsentError, match=r"no longer valid \(failed\)"):
        await store.open_elicitation(finished.id)


async def test_a_state_is_consumed_once_and_its_verifier_is_stored_encrypted(
    store: AnyStore, backend: Backend
) -> None:
    elicitation = await store.create_elicitation("alice", ttl=300)
    state = await store.create_state(elicitation.id, "alice", "pkce-verifier-value", "nonce-1", ttl=600)
    raw = backend.sql("SELECT state_hash, verifier FROM oauth_states")
    assert state not in str(raw)
    assert "pkce-verifier-value" not in str(raw)
    consent = await store.consume_state(state)
    assert consent is not None
    assert (consent.subject, consent.verifier, consent.nonce) == ("alice", "pkce-verifier-value", "nonce-1")
    assert await store.consume_state(state) is None


async def test_expiry_marks_pending_elicitations_and_drops_old_states(store: AnyStore) -> None:
    clock: Clock = store._clock  # type: ignore[assignment]
    pending = await store.create_elicitation("alice", ttl=60)
    state = await store.create_state(pending.id, "alice", "v", "n", ttl=60)
    clock.now += 61
    assert await store.expire() == 1
    found = await store.get_elicitation(pending.id)
    assert found is not None
    assert found.status == "expired"
    assert await store.consume_state(state) is None


async def test_rotation_rewrites_every_secret_under_the_new_key(backend: Backend) -> None:
    old, new = generate_key(), generate_key()
    before = backend.store(Cipher([old]))
    await before.open()
    await before.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-alice"))
    elicitation = await before.create_elicitation("alice", ttl=300)
    await before.create_state(elicitation.id, "alice", "verifier", "nonce", ttl=300)
    await before.close()

    rotating = backend.store(Cipher([new, old]))
    await rotating.open()
    assert await rotating.rotate_keys() == 2
    await rotating.close()

    only_new = backend.store(Cipher([new]))
    await only_new.open()
    grant = await only_new.get_grant("alice")
    await only_new.close()
    assert grant is not None
    assert grant.secret == "rt-alice"


async def test_the_audit_trail_keeps_events_without_secrets(store: AnyStore) -> None:
    await store.audit("alice", "granted", "provider oidc")
    await store.audit("bob", "revoked")
    events = await store.audit_events("alice")
    assert [(e.subject, e.event, e.detail) for e in events] == [("alice", "granted", "provider oidc")]
    assert len(await store.audit_events()) == 2


async def test_a_first_schema_store_is_migrated_and_keeps_its_grants(backend: Backend) -> None:
    """A store written by the first release (schema 1) opens: the grant is still readable, and
    the new columns (an app password's login name, an elicitation's expected user) exist."""
    cipher = Cipher([KEY])
    backend.script(MIGRATIONS[0])
    backend.sql("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    backend.sql("INSERT INTO schema_version VALUES (1)")
    sealed = cipher.encrypt("old-refresh-token", table="grants", subject="alice", field="secret")
    backend.sql(
        "INSERT INTO grants (subject, user_id, provider, kind, secret, key_id, created_at, updated_at) "
        "VALUES ('alice', 'alice', 'oidc', 'refresh_token', ?, ?, 1, 1)",
        (sealed, cipher.current_key_id),
    )
    store = backend.store(cipher)
    await store.open()
    try:
        grant = await store.get_grant("alice")
        asked = await store.create_elicitation("bob", 60, user_id="bob.nc")
        again = await store.get_elicitation(asked.id)
        await store.save_grant(
            Grant("carol", "carol", "login-flow-v2", "app_password", "pw", login="carol@x")
        )
        carol = await store.get_grant("carol")
    finally:
        await store.close()
    assert grant is not None
    assert (grant.secret, grant.login) == ("old-refresh-token", "")
    assert again is not None
    assert again.user_id == "bob.nc"
    assert carol is not None
    assert carol.login == "carol@x"
    assert backend.sql("SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
