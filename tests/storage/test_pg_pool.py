"""The PostgreSQL pool keeps its connections however many descriptors the process has open."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator

import pytest

from nextcloud_mcp_server.storage.pg_pool import ConnectionPool
from tests.postgres import PostgresCluster


@pytest.fixture
def many_descriptors() -> Iterator[None]:
    """More than 1,024 descriptors open, so the next socket's number is above select()'s limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))
    held = []
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        while not held or held[-1] < 1100:
            held.append(os.dup(devnull))
        yield
    finally:
        for fd in [devnull, *held]:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_connection_on_a_descriptor_above_1024_is_reused(
    postgres: PostgresCluster, many_descriptors: None
) -> None:
    with postgres.database() as url:
        pool = ConnectionPool(url, 2)
        try:
            async with pool.connection() as first:
                assert first.pgconn.socket > 1024
                await first.execute("SELECT 1")
            async with pool.connection() as second:
                await second.execute("SELECT 1")
        finally:
            await pool.close()
    assert second is first
