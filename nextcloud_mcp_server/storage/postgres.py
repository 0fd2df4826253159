"""The consent store on PostgreSQL, for several replicas sharing one database (STORE_URL).

Same interface, encryption and guarantees as `SQLiteStore` (`store.py`); the schema comes from the
same `MIGRATIONS` (`records.py`), written for SQLite and adapted here (`postgres_sql`). What
PostgreSQL adds for replicas:
- migrations run under an advisory lock, so replicas starting together migrate once;
- `refresh_lock(subject)`: a session-level advisory lock held while one replica refreshes a user's
  token, so two replicas never spend the same refresh token (single-flight across replicas);
- `announce_completion` / `listen_completions`: LISTEN/NOTIFY, so the replica that finished a
  consent can tell the replica holding the MCP session that asked.

Lock connections come from their own small pool: a replica waiting for a lock never holds a
connection that the lock's holder needs for its queries (no deadlock when many users refresh).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import psycopg

from nextcloud_mcp_server.storage.connection import Connection, InTransaction, PostgresConnection
from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.engines import TooNew
from nextcloud_mcp_server.storage.pg_pool import ConnectionPool
from nextcloud_mcp_server.storage.records import StoreError, StoreUnavailable
from nextcloud_mcp_server.storage.store import CONSENT_CHANNEL, ConsentStore

__all__ = ["CONSENT_CHANNEL", "PostgresEngine", "PostgresStore", "migrate", "postgres_sql", "redacted_url"]

logger = logging.getLogger(__name__)


def postgres_sql(statement: str) -> str:
    """A migration written for SQLite, in PostgreSQL's words: 8-byte floats for timestamps (a
    PostgreSQL REAL has 4 bytes: seconds would be lost) and an identity column for AUTOINCREMENT."""
    statement = statement.replace(
        "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    )
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


def redacted_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


async def migrate(
    pool: ConnectionPool,
    lock: int,
    version_table: str,
    migrations: list[str],
    too_new: TooNew,
) -> None:
    """Bring tables to the newest of `migrations` (SQLite statements, adapted by `postgres_sql`),
    in one transaction under the advisory lock `lock`: replicas starting together migrate once,
    the others wait and find it done. `version_table` holds the version reached; a version newer
    than `migrations` raises `too_new(version)` and changes nothing."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {version_table} (version INTEGER NOT NULL)")
        row = await (await conn.execute(f"SELECT version FROM {version_table}")).fetchone()  # noqa: S608
        current = int(row[0]) if row else 0  # type: ignore[call-overload]
        if current > len(migrations):
            raise too_new(current)
        for version in range(current + 1, len(migrations) + 1):
            for statement in filter(str.strip, migrations[version - 1].split(";")):
                await conn.execute(postgres_sql(statement))
        if current < len(migrations):
            await conn.execute(f"DELETE FROM {version_table}")  # noqa: S608
            await conn.execute(f"INSERT INTO {version_table} VALUES (%s)", (len(migrations),))  # noqa: S608


def _lock_key(subject: str) -> int:
    """A signed 64-bit advisory lock id for refreshing `subject`'s grant."""
    digest = hashlib.sha256(b"nextcloud-mcp-refresh:" + subject.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresEngine:
    """Open with `await engine.open()` (pools are made in the running event loop)."""

    row_lock = " FOR UPDATE"
    errors: tuple[type[Exception], ...] = (psycopg.Error,)

    def __init__(
        self, url: str, *, pool_size: int = 10, lock_pool_size: int = 8, lock_timeout_seconds: int = 60
    ) -> None:
        self.url = url
        self._sizes = (pool_size, lock_pool_size)
        # A lock wait gives up after lock_timeout (a stuck holder must not block a user forever).
        self._lock_setup = [f"SET lock_timeout = '{int(lock_timeout_seconds)}s'"]
        self._pools: tuple[ConnectionPool, ConnectionPool] | None = None
        self._listener: asyncio.Task[None] | None = None

    def __str__(self) -> str:
        return redacted_url(self.url)

    @property
    def pool(self) -> ConnectionPool:
        """The query pool every table's statements run on."""
        if self._pools is None:
            raise StoreError("the store is not open")
        return self._pools[0]

    @property
    def _lock_pool(self) -> ConnectionPool:
        if self._pools is None:
            raise StoreError("the store is not open")
        return self._pools[1]

    @property
    def connection(self) -> Connection:
        return PostgresConnection(self.pool)

    async def open(self) -> None:
        self._pools = (
            ConnectionPool(self.url, self._sizes[0]),
            ConnectionPool(self.url, self._sizes[1], setup=self._lock_setup),
        )

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._pools is not None:
            pools, self._pools = self._pools, None
            for pool in pools:
                await pool.close()

    async def ping(self) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("SELECT 1 FROM schema_version")

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """The statements until the end run on one connection and commit together, or not at all."""
        async with self.pool.connection() as conn, conn.transaction():
            yield InTransaction(conn)

    async def migrate(self, version_table: str, migrations: list[str], too_new: TooNew, *, lock: int) -> None:
        try:
            await migrate(self.pool, lock, version_table, migrations, too_new)
        except StoreUnavailable as exc:  # at start-up: say which store (without its password)
            raise StoreError(f"cannot use the store at {self}: {exc}") from None

    @contextlib.asynccontextmanager
    async def refresh_lock(self, subject: str) -> AsyncIterator[None]:
        """Held by one replica at a time while it refreshes `subject`'s credential."""
        key = _lock_key(subject)
        try:
            async with self._lock_pool.connection() as conn:
                await conn.execute("SELECT pg_advisory_lock(%s)", (key,))
                yield
                try:
                    await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except psycopg.OperationalError as exc:
                    # The session is gone (PostgreSQL restarted during the refresh): the lock
                    # died with it, and the refresh it guarded is done. The pool closes the
                    # broken connection rather than lending it again.
                    logger.info("the refresh lock's session ended first (%s)", type(exc).__name__)
        except psycopg.errors.LockNotAvailable:
            raise StoreError("another replica has been refreshing this user's token for too long") from None

    async def announce(self, channel: str, payload: str) -> None:
        """Tell every replica listening on `channel`."""
        async with self.pool.connection() as conn:
            await conn.execute("SELECT pg_notify(%s, %s)", (channel, payload[:200]))

    def listen(self, channel: str, handler: Callable[[str], Awaitable[object]]) -> None:
        """Call `handler(payload)` for everything any replica announces on `channel`, until closed."""
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(channel, handler), name=f"listen-{channel}")

    async def _listen(self, channel: str, handler: Callable[[str], Awaitable[object]]) -> None:
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
                async with conn:
                    await conn.execute(f"LISTEN {channel}")
                    async for notice in conn.notifies():
                        try:
                            await handler(notice.payload)
                        except Exception:
                            logger.exception("handling an announcement on %s failed", channel)
            except psycopg.Error as exc:
                # What is announced while we reconnect is missed; the client's own retry still
                # works (and its session gets no notification it was never promised twice).
                logger.warning("listening on %s failed (%s); reconnecting", channel, exc)
                await asyncio.sleep(1.0)


class PostgresStore(ConsentStore):
    """The store on PostgreSQL (STORE_URL): the same tables, rows and guarantees as on SQLite."""

    def __init__(
        self,
        url: str,
        cipher: Cipher,
        *,
        clock: Callable[[], float] = time.time,
        pool_size: int = 10,
        lock_pool_size: int = 8,
        lock_timeout_seconds: int = 60,
    ) -> None:
        engine = PostgresEngine(
            url, pool_size=pool_size, lock_pool_size=lock_pool_size, lock_timeout_seconds=lock_timeout_seconds
        )
        super().__init__(engine, cipher, clock=clock)
        self.url = url

    @property
    def pool(self) -> ConnectionPool:
        """The query pool (every table's statements run on it)."""
        assert isinstance(self.engine, PostgresEngine)
        return self.engine.pool
