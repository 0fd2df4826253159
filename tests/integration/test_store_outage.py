"""PostgreSQL restarts and outages (issue 39, ADR 0056): a restart costs no statement a retry on
a new connection can save - in the query pool and in the pool of the refresh locks - and while
the store cannot be reached the server answers 503 with Retry-After, never 500, and recovers by
itself. A PostgreSQL cluster of this module's own, since it is stopped and started."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.postgres import PostgresStore
from nextcloud_mcp_server.storage.records import Grant, StoreUnavailable
from tests.authz_server import authz_server
from tests.mcp_clients import INITIALIZE, MCP_HEADERS
from tests.offline import KEY
from tests.postgres import PostgresCluster
from tests.postgres_restart import restartable_cluster, start, stop

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresCluster]:
    with restartable_cluster() as cluster:
        yield cluster


async def test_a_restart_costs_no_query_and_no_refresh_lock(own_postgres: PostgresCluster) -> None:
    with own_postgres.database() as url:
        store = PostgresStore(url, Cipher([KEY]))
        await store.open()
        try:
            await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-1"))
            async with store.refresh_lock("alice"):  # both pools now hold an idle connection
                pass
            stop(own_postgres)
            start(own_postgres)
            # the idle connections are dead: each pool notices before lending one
            grant = await store.get_grant("alice")
            async with store.refresh_lock("alice"):
                assert await store.replace_secret("alice", 1, "rt-2")
            stop(own_postgres)
            with pytest.raises(StoreUnavailable):
                await store.get_grant("alice")
            start(own_postgres)
            again = await store.get_grant("alice")
        finally:
            await store.close()
    assert grant is not None
    assert grant.secret == "rt-1"
    assert again is not None
    assert again.secret == "rt-2"


async def test_while_the_store_is_down_the_server_answers_503_with_retry_after(
    own_postgres: PostgresCluster, double_url: str, tmp_path: Path
) -> None:
    """The check of this server's own access tokens reads the store: down, it is a 503 the client
    may retry, not a 500; back, the same request is answered."""
    with (
        own_postgres.database() as url,
        authz_server(double_url, tmp_path / "unused.sqlite3", store_url=url) as server,
    ):
        tokens = server.tokens_for()
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['access_token']}"}
        stop(own_postgres)
        try:
            with httpx.Client(timeout=30) as http:
                down = http.post(server.mcp, json=INITIALIZE, headers=headers)
        finally:
            start(own_postgres)
        with httpx.Client(timeout=30) as http:
            back = http.post(server.mcp, json=INITIALIZE, headers=headers)
    assert down.status_code == 503, down.text
    assert down.headers["Retry-After"] == "5"
    assert down.json()["error"] == "temporarily_unavailable"
    assert back.status_code == 200, back.text


async def test_a_restart_during_a_refresh_ends_the_lock_without_an_error(
    own_postgres: PostgresCluster,
) -> None:
    """The lock's session died with the restart, and the lock with it: releasing it is not an error
    (the refresh it guarded succeeded), and the next refresh takes it on a new connection."""
    with own_postgres.database() as url:
        store = PostgresStore(url, Cipher([KEY]))
        await store.open()
        try:
            await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-1"))
            async with store.refresh_lock("alice"):
                stop(own_postgres)
                start(own_postgres)
                assert await store.replace_secret("alice", 1, "rt-2")  # the refresh went through
            async with store.refresh_lock("alice"):
                grant = await store.get_grant("alice")
        finally:
            await store.close()
    assert grant is not None
    assert grant.secret == "rt-2"
