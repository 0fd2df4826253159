"""A small pool of psycopg 3 async connections (autocommit), opened lazily, bounded, and
self-healing: a connection that broke, or was handed back inside a transaction, is closed instead
of reused. (psycopg_pool would do; this keeps one dependency fewer for the dozen lines needed.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import psycopg
from psycopg import pq

__all__ = ["ConnectionPool"]


class ConnectionPool:
    def __init__(self, url: str, size: int, *, setup: Sequence[str] = (), connect_timeout: int = 10) -> None:
        self._url = url
        self._setup = tuple(setup)
        self._connect_timeout = connect_timeout
        self._slots = asyncio.Semaphore(size)
        self._idle: list[psycopg.AsyncConnection[tuple[object, ...]]] = []
        self._closed = False

    async def _connect(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        conn = await psycopg.AsyncConnection.connect(
            self._url, autocommit=True, connect_timeout=self._connect_timeout
        )
        for statement in self._setup:
            await conn.execute(statement)
        return conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[tuple[object, ...]]]:
        if self._closed:
            raise psycopg.OperationalError("the connection pool is closed")
        async with self._slots:
            conn = self._idle.pop() if self._idle else await self._connect()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                idle = conn.info.transaction_status == pq.TransactionStatus.IDLE
                if healthy and idle and not conn.closed and not self._closed:
                    self._idle.append(conn)
                else:
                    await conn.close()

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()
