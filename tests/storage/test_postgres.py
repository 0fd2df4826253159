"""What PostgreSQL adds for several replicas: migrations once when replicas start together, a
refresh lock held by one replica at a time, completions announced to every replica, and a URL
whose password never shows."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.postgres import PostgresStore, postgres_sql, redacted_url
from nextcloud_mcp_server.storage.records import MIGRATIONS, Grant, StoreError
from tests.postgres import PostgresCluster

KEY = generate_key()


@pytest.fixture
def url(postgres: PostgresCluster) -> Iterator[str]:
    with postgres.database() as database_url:
        yield database_url


async def test_replicas_starting_together_migrate_once(url: str) -> None:
    replicas = [PostgresStore(url, Cipher([KEY])) for _ in range(4)]
    await asyncio.gather(*(r.open() for r in replicas))
    try:
        await replicas[0].save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt"))
        grant = await replicas[3].get_grant("alice")
        assert grant is not None
        assert grant.secret == "rt"
    finally:
        for replica in replicas:
            await replica.close()


async def test_the_refresh_lock_is_held_by_one_replica_at_a_time(url: str) -> None:
    a, b = PostgresStore(url, Cipher([KEY])), PostgresStore(url, Cipher([KEY]))
    await a.open()
    await b.open()
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    released = asyncio.Event()

    async def refresh(store: PostgresStore, name: str, hold: asyncio.Event | None) -> None:
        async with store.refresh_lock("alice"):
            inside.append(name)
            overlaps.append(tuple(inside))
            if hold is not None:
                await hold.wait()
            inside.remove(name)

    try:
        first = asyncio.create_task(refresh(a, "a", released))
        while not inside:  # a holds the lock
            await asyncio.sleep(0.01)
        second = asyncio.create_task(refresh(b, "b", None))
        other_user = b.refresh_lock("bob")  # another user is not held up
        async with other_user:
            pass
        assert not second.done()
        released.set()
        await asyncio.wait_for(asyncio.gather(first, second), 30)
    finally:
        await a.close()
        await b.close()
    assert overlaps == [("a",), ("b",)]


async def test_a_lock_held_too_long_fails_clearly_instead_of_waiting_forever(url: str) -> None:
    a = PostgresStore(url, Cipher([KEY]))
    b = PostgresStore(url, Cipher([KEY]), lock_timeout_seconds=1)
    await a.open()
    await b.open()
    try:
        async with a.refresh_lock("alice"):
            with pytest.raises(StoreError, match="refreshing this user's token for too long"):
                async with b.refresh_lock("alice"):
                    pass
        async with b.refresh_lock("alice"):  # free again, and b's pool still works
            pass
    finally:
        await a.close()
        await b.close()


async def test_a_completion_announced_by_one_replica_reaches_every_replica(url: str) -> None:
    a, b = PostgresStore(url, Cipher([KEY])), PostgresStore(url, Cipher([KEY]))
    await a.open()
    await b.open()
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def on_completion(elicitation_id: str) -> bool:
        await heard.put(elicitation_id)
        return True

    try:
        a.listen_completions(on_completion)
        # LISTEN takes effect once the listener has connected: announce until it is heard.
        async with asyncio.timeout(30):
            while heard.empty():
                await b.announce_completion("warm-up")
                await asyncio.sleep(0.05)
            await b.announce_completion("elicitation-1")
            while (await heard.get()) != "elicitation-1":
                pass
    finally:
        await a.close()
        await b.close()


async def test_an_unreachable_database_is_a_clear_store_error_without_the_password() -> None:
    store = PostgresStore("postgresql://mcp:s3cret-pw@127.0.0.1:1/mcp", Cipher([KEY]))
    with pytest.raises(StoreError) as caught:
        await store.open()
    assert "s3cret-pw" not in str(caught.value)
    assert "postgresql://mcp:***@127.0.0.1:1/mcp" in str(caught.value)


def test_sqlite_migrations_are_adapted_for_postgresql() -> None:
    adapted = postgres_sql(MIGRATIONS[0])
    assert " REAL" not in adapted
    assert "created_at DOUBLE PRECISION NOT NULL" in adapted
    assert "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" in adapted
    assert redacted_url("postgresql://u@h/db") == "postgresql://u@h/db"


async def test_keys_rotate_on_the_command_line_works_on_postgresql(url: str, tmp_path: Path) -> None:
    """`nextcloud-mcp-bridge keys rotate` with STORE_URL: re-encrypts under the first key, prints
    the store without its password, and the old key is no longer needed afterwards."""
    old, new = generate_key(), generate_key()
    store = PostgresStore(url, Cipher([old]))
    await store.open()
    await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-alice"))
    await store.close()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "NEXTCLOUD_HOST": "http://127.0.0.1:9",
        "OIDC_ISSUER": "http://127.0.0.1:9",
        "MCP_PUBLIC_URL": "http://127.0.0.1:9/mcp",
        "ENABLE_OFFLINE_ACCESS": "true",
        "TOKEN_ENCRYPTION_KEY": f"{new},{old}",
        "STORE_URL": url,
    }
    rotated = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "nextcloud_mcp_server", "keys", "rotate"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert rotated.returncode == 0, rotated.stderr
    assert f"re-encrypted 1 secret(s) under key {Cipher([new]).current_key_id} in {url}" in rotated.stdout
    only_new = PostgresStore(url, Cipher([new]))
    await only_new.open()
    try:
        grant = await only_new.get_grant("alice")
    finally:
        await only_new.close()
    assert grant is not None
    assert grant.secret == "rt-alice"
