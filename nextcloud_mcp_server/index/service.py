"""The process's find index: made from the settings, opened at its first use, closed with the
runtime; and the deletion of a user's index when their grant goes (docs/ADR/0071)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.index.engine import FindIndex

__all__ = ["FindService", "index_path"]

logger = logging.getLogger(__name__)


def index_path(settings: Settings) -> Path:
    """The SQLite file of the index: FIND_INDEX_PATH, else beside the store's file."""
    return settings.find_index_path or settings.store_path.parent / "find-index.sqlite3"


class FindService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._index: FindIndex | None = None
        self._lock = asyncio.Lock()

    def _make(self) -> FindIndex:
        if self.settings.store_url is not None:
            # imported here for start-up cost: psycopg only where PostgreSQL is used
            from nextcloud_mcp_server.index.postgres import PostgresIndex

            languages = [x for x in self.settings.find_languages.split(",") if x]
            return PostgresIndex(self.settings.store_url.get_secret_value(), languages=languages)
        from nextcloud_mcp_server.index.sqlite import SQLiteIndex

        return SQLiteIndex(index_path(self.settings))

    async def index(self) -> FindIndex:
        """The index, opened (once) on first use."""
        async with self._lock:
            if self._index is None:
                made = self._make()
                await made.open()
                self._index = made
            return self._index

    async def forget(self, user: str) -> int:
        """Delete everything kept for `user` (a revoked grant, or the person asked); an SQLite
        index that was never made is not made for this."""
        if self._index is None and self.settings.store_url is None and not index_path(self.settings).exists():
            return 0
        removed = await (await self.index()).forget(user)
        if removed:
            logger.info("the find index of a user was deleted (%d items)", removed)
        return removed

    async def close(self) -> None:
        async with self._lock:
            if self._index is not None:
                index, self._index = self._index, None
                await index.close()
