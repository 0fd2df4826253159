"""Which store a server uses: SQLite (STORE_PATH, the default) or PostgreSQL (STORE_URL), for
several replicas sharing one database. Both implement `StoreBackend`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.engines import Engine
from nextcloud_mcp_server.storage.store import Store

__all__ = ["StoreBackend", "make_store"]


class StoreBackend(Store, Protocol):
    """The store with what opening, health, key rotation and replicas need."""

    engine: Engine  # what every table of the store lives on
    unreadable_grants: list[str]  # found by the last rotate_keys()
    dropped_states: int

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    async def rotate_keys(self) -> int: ...
    def refresh_lock(self, subject: str) -> AbstractAsyncContextManager[None]: ...
    async def announce_completion(self, elicitation_id: str) -> None: ...
    def listen_completions(self, handler: Callable[[str], Awaitable[object]]) -> None: ...


def make_store(settings: Settings, cipher: Cipher) -> StoreBackend:
    if settings.store_url is not None:
        from nextcloud_mcp_server.storage.postgres import PostgresStore

        return PostgresStore(settings.store_url.get_secret_value(), cipher)
    from nextcloud_mcp_server.storage.store import SQLiteStore

    return SQLiteStore(settings.store_path, cipher)
