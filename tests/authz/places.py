"""Where the authorization server's tables live in tests: a real SQLite file or a real PostgreSQL
database (the session's throwaway cluster), opened as the running server opens them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nextcloud_mcp_server.authz.service import open_connection
from nextcloud_mcp_server.storage.backends import StoreBackend
from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.postgres import PostgresStore
from nextcloud_mcp_server.storage.store import SQLiteStore

__all__ = ["Place", "place"]


@dataclass
class Place:
    name: str
    db: Connection
    cipher: Cipher
    store: StoreBackend

    async def rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        async with self.db.execute(query, args) as cursor:
            return [tuple(row) for row in await cursor.fetchall()]


@pytest.fixture(params=["sqlite", "postgresql"])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Place]:
    cipher = Cipher([generate_key()])
    with ExitStack() as stack:
        store: StoreBackend
        if request.param == "sqlite":
            store = SQLiteStore(tmp_path / "store.sqlite3", cipher)
        else:
            url = stack.enter_context(request.getfixturevalue("postgres").database())
            store = PostgresStore(url, cipher)
        await store.open()
        try:
            yield Place(request.param, await open_connection(store), cipher, store)
        finally:
            await store.close()
