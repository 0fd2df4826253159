"""The two engines under the one store: what differs between an SQLite file and PostgreSQL, and
nothing else (every table's rows, sealing and queries are written once, in `store.py` and in
authz/, over `connection.Connection`).

An engine opens and closes itself, hands out its connection and transactions, runs a list of
migrations for a version table (the consent store's, the authorization server's), and offers
what replicas need (a lock per user while a token is refreshed, completions announced to the
other replicas): on SQLite, one replica per file, so those are trivial. `SQLiteEngine` is here;
`PostgresEngine` is in `postgres.py` (psycopg is imported only where PostgreSQL is used).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

import aiosqlite

from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.records import StoreError

__all__ = ["Engine", "SQLiteEngine", "TooNew"]

TooNew = Callable[[int], Exception]  # the error for a stored version newer than the code knows


class Engine(Protocol):
    row_lock: str  # appended to a SELECT whose rows a transaction will rewrite
    errors: tuple[type[Exception], ...]  # what its driver raises when the database fails

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    @property
    def connection(self) -> Connection: ...
    def transaction(self) -> AbstractAsyncContextManager[Connection]: ...
    async def migrate(
        self, version_table: str, migrations: list[str], too_new: TooNew, *, lock: int
    ) -> None: ...
    def refresh_lock(self, subject: str) -> AbstractAsyncContextManager[None]: ...
    async def announce(self, channel: str, payload: str) -> None: ...
    def listen(self, channel: str, handler: Callable[[str], Awaitable[object]]) -> None: ...


class SQLiteEngine:
    """One SQLite file in WAL mode, one connection (aiosqlite's thread)."""

    row_lock = ""  # one connection: a transaction's rows are its own until it commits
    errors: tuple[type[Exception], ...] = (aiosqlite.Error,)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None

    def __str__(self) -> str:
        return str(self.path)

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise StoreError("the store is not open")
        return self._db

    @property
    def connection(self) -> Connection:
        return self.db

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = await aiosqlite.connect(self.path)
            await self.db.execute("PRAGMA journal_mode=WAL")
            await self.db.execute("PRAGMA synchronous=NORMAL")
            await self.db.execute("PRAGMA busy_timeout=5000")
        except aiosqlite.Error as exc:
            await self.close()
            raise StoreError(f"cannot use the store at {self.path}: {exc}") from None
        except BaseException:
            await self.close()  # the connection's thread must not outlive a failed open
            raise

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def ping(self) -> None:
        async with self.db.execute("SELECT 1 FROM schema_version") as cursor:
            await cursor.fetchone()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """The statements until the end commit together, or not at all."""
        try:
            yield self.db
        except BaseException:
            await self.db.rollback()
            raise
        await self.db.commit()

    async def migrate(self, version_table: str, migrations: list[str], too_new: TooNew, *, lock: int) -> None:
        """Bring the tables to the newest of `migrations`; each one and its version bump commit
        together (SQLite DDL is transactional). `lock` is PostgreSQL's (one replica per file here)."""
        await self.db.execute(f"CREATE TABLE IF NOT EXISTS {version_table} (version INTEGER NOT NULL)")
        async with self.db.execute(f"SELECT version FROM {version_table}") as cursor:  # noqa: S608 - a constant
            row = await cursor.fetchone()
        current = int(row[0]) if row else 0
        if current > len(migrations):
            raise too_new(current)
        for version in range(current + 1, len(migrations) + 1):
            await self.db.execute("BEGIN")
            for statement in filter(str.strip, migrations[version - 1].split(";")):
                await self.db.execute(statement)
            await self.db.execute(f"DELETE FROM {version_table}")  # noqa: S608 - a constant
            await self.db.execute(f"INSERT INTO {version_table} VALUES (?)", (version,))  # noqa: S608
            await self.db.commit()

    @contextlib.asynccontextmanager
    async def refresh_lock(self, subject: str) -> AsyncIterator[None]:
        """One replica per SQLite file: the in-process lock and the compare-and-swap suffice."""
        yield

    async def announce(self, channel: str, payload: str) -> None:
        """Nothing to tell: no other replica shares an SQLite file."""

    def listen(self, channel: str, handler: Callable[[str], Awaitable[object]]) -> None:
        """No other replica announces anything."""
