"""The one connection surface every table of the store is used through, on either engine: the
SQLite engine's own aiosqlite connection, or `PostgresConnection` - an adapter that gives the same
small surface (`execute` awaited or used as a context manager, `rowcount`, `fetchone`, `fetchall`,
`commit`) over the PostgreSQL engine's autocommit pool, with SQLite's `?` placeholders. Outside a
transaction every statement is atomic on its own (single use is an `UPDATE ... WHERE ... IS NULL
RETURNING ...` or its row count, on either database); `InTransaction` runs several statements on
one PostgreSQL connection inside a transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from nextcloud_mcp_server.storage.records import StoreUnavailable

if TYPE_CHECKING:
    import psycopg

    from nextcloud_mcp_server.storage.pg_pool import ConnectionPool

__all__ = ["Connection", "InTransaction", "PostgresConnection"]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    async def fetchone(self) -> Any: ...
    async def fetchall(self) -> Iterable[Any]: ...


class Call(Protocol):
    def __await__(self) -> Generator[Any, None, Cursor]: ...
    async def __aenter__(self) -> Cursor: ...
    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Any: ...


class Connection(Protocol):
    def execute(self, sql: str, parameters: Iterable[Any] = ...) -> Call: ...
    async def commit(self) -> None: ...


class _Rows:
    def __init__(self, rowcount: int, rows: list[tuple[Any, ...]]) -> None:
        self._rowcount = rowcount
        self._rows = rows

    @property
    def rowcount(self) -> int:
        return self._rowcount

    async def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    async def fetchall(self) -> Iterable[Any]:
        return list(self._rows)


class _Statement:
    """One statement, run when awaited (or entered) on the connection `connect` lends."""

    def __init__(
        self,
        connect: Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[tuple[object, ...]]]],
        sql: str,
        parameters: Iterable[Any],
        *,
        retry: bool = False,
    ) -> None:
        self._connect = connect
        self._retry = retry
        self._sql = sql.replace("?", "%s")  # no statement here has a literal question mark
        self._parameters = tuple(parameters)

    async def _once(self) -> _Rows:
        async with self._connect() as conn:
            cursor = await conn.execute(self._sql, self._parameters)
            rows = await cursor.fetchall() if cursor.description else []
            return _Rows(cursor.rowcount, list(rows))

    async def _run(self) -> _Rows:
        try:
            return await self._once()
        except StoreUnavailable as exc:
            # The connection broke under the statement (a database restart): once more on a new
            # one. Autocommit: had it been committed, a single-use UPDATE now finds its row used.
            if not (self._retry and exc.lost_connection):
                raise
            return await self._once()

    def __await__(self) -> Generator[Any, None, _Rows]:
        return self._run().__await__()

    async def __aenter__(self) -> _Rows:
        return await self._run()

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        return None


class PostgresConnection:
    """Each statement on a connection of the pool, committed by itself (autocommit)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    def execute(self, sql: str, parameters: Iterable[Any] = ()) -> _Statement:
        return _Statement(self._pool.connection, sql, parameters, retry=True)

    async def commit(self) -> None:
        """Each statement commits by itself (autocommit)."""


class InTransaction:
    """The connection surface on one PostgreSQL connection inside a transaction."""

    def __init__(self, conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Iterable[Any] = ()) -> _Statement:
        return _Statement(lambda: contextlib.nullcontext(self._conn), sql, parameters)

    async def commit(self) -> None:
        """The transaction commits as a whole when it ends."""
