"""The database connection the authorization server's tables live on: the SQLite store's own
aiosqlite connection, or, with the PostgreSQL store, `PostgresConnection` - an adapter that gives
the same small surface (`execute` awaited or used as a context manager, `rowcount`, `fetchone`,
`fetchall`, `commit`) over the store's autocommit pool. Every statement the authorization server
runs is a single atomic statement, so autocommit keeps the guarantees (single use is an
`UPDATE ... WHERE ... IS NULL` and its row count, on either database)."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from nextcloud_mcp_server.storage.pg_pool import ConnectionPool

__all__ = ["Connection", "PostgresConnection"]


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
    def __init__(self, pool: ConnectionPool, sql: str, parameters: Iterable[Any]) -> None:
        self._pool = pool
        self._sql = sql.replace("?", "%s")  # no statement here has a literal question mark
        self._parameters = tuple(parameters)

    async def _run(self) -> _Rows:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(self._sql, self._parameters)
            rows = await cursor.fetchall() if cursor.description else []
            return _Rows(cursor.rowcount, list(rows))

    def __await__(self) -> Generator[Any, None, _Rows]:
        return self._run().__await__()

    async def __aenter__(self) -> _Rows:
        return await self._run()

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        return None


class PostgresConnection:
    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    def execute(self, sql: str, parameters: Iterable[Any] = ()) -> _Statement:
        return _Statement(self._pool, sql, parameters)

    async def commit(self) -> None:
        """Each statement commits by itself (autocommit)."""
