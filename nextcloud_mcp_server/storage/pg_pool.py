"""A small pool of psycopg 3 async connections (autocommit), opened lazily, bounded, and
self-healing (docs/ADR/0056): a connection that broke, or was handed back inside a transaction,
is closed instead of reused; an idle one is checked before it is lent - an idle connection has
nothing to read, so a readable socket means the server said goodbye (a restart's "terminating
connection") or closed it - at no round trip's cost; a new connection is retried for a few seconds
while the server (re)starts. What still cannot be reached raises `StoreUnavailable`.
(psycopg_pool would do; this keeps one dependency fewer for what is needed.)"""

from __future__ import annotations

import asyncio
import logging
import select
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import psycopg
from psycopg import pq

from nextcloud_mcp_server.storage.records import StoreUnavailable

__all__ = ["ConnectionPool"]

logger = logging.getLogger(__name__)

Conn = psycopg.AsyncConnection[tuple[object, ...]]


def _usable(conn: Conn) -> bool:
    """An idle connection that is still open at both ends (no round trip)."""
    if conn.closed or conn.broken or conn.info.transaction_status != pq.TransactionStatus.IDLE:
        return False
    try:
        # poll, not select: select() cannot watch a descriptor above FD_SETSIZE (1024), which a
        # busy process reaches; it raised, and every pooled connection was thrown away.
        poller = select.poll()
        poller.register(conn.pgconn.socket, select.POLLIN)
        return not poller.poll(0)
    except (OSError, ValueError, psycopg.OperationalError):
        return False


class ConnectionPool:
    def __init__(
        self,
        url: str,
        size: int,
        *,
        setup: Sequence[str] = (),
        connect_timeout: int = 10,
        reconnect_seconds: float = 3.0,
    ) -> None:
        self._url = url
        self._setup = tuple(setup)
        self._connect_timeout = connect_timeout
        self._reconnect_seconds = reconnect_seconds
        self._slots = asyncio.Semaphore(size)
        self._idle: list[Conn] = []
        self._closed = False

    async def _connect(self) -> Conn:
        """A new connection; while the server refuses (restarting), tried again for a few seconds."""
        deadline, pause = time.monotonic() + self._reconnect_seconds, 0.05
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self._url, autocommit=True, connect_timeout=self._connect_timeout
                )
                for statement in self._setup:
                    await conn.execute(statement)
                return conn
            except psycopg.OperationalError as exc:
                if time.monotonic() + pause > deadline:
                    raise StoreUnavailable(type(exc).__name__) from None
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.5)

    async def _take(self) -> Conn:
        while self._idle:
            conn = self._idle.pop()
            if _usable(conn):
                return conn
            logger.info("a pooled database connection was closed by the server; opening a new one")
            await conn.close()
        return await self._connect()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        if self._closed:
            raise psycopg.OperationalError("the connection pool is closed")
        async with self._slots:
            conn = await self._take()
            healthy = False
            try:
                yield conn
                healthy = True
            except psycopg.OperationalError as exc:
                if conn.broken or conn.closed:
                    raise StoreUnavailable(type(exc).__name__, lost_connection=True) from None
                raise
            finally:
                idle = conn.info.transaction_status == pq.TransactionStatus.IDLE
                if healthy and idle and not (conn.closed or conn.broken or self._closed):
                    self._idle.append(conn)
                else:
                    await conn.close()

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()
