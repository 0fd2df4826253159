"""The process's find index: made from the settings, opened at its first use, closed with the
runtime; and the deletion of a user's index when their grant goes (docs/ADR/0071)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from nextcloud_mcp_server.config import ConfigError, Settings
from nextcloud_mcp_server.index.engine import FindIndex
from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.ocr import missing

if TYPE_CHECKING:  # numpy and the model only once the index is used (start-up cost)
    from nextcloud_mcp_server.index.embedding import Embedder
    from nextcloud_mcp_server.index.meaning import Meaning
    from nextcloud_mcp_server.index.vectors import VectorStore

__all__ = ["FindService", "embedder_of", "index_path", "limits_of", "ocr_problem"]

logger = logging.getLogger(__name__)


def index_path(settings: Settings) -> Path:
    """The SQLite file of the index: FIND_INDEX_PATH, else beside the store's file."""
    return settings.find_index_path or settings.store_path.parent / "find-index.sqlite3"


def limits_of(settings: Settings) -> Limits:
    """How far one file is read, from the settings (docs/ADR/0075; OCR: 0096)."""
    seconds = max(settings.find_extract_seconds, settings.find_ocr_seconds if settings.find_ocr else 0)
    return Limits(
        max_bytes=settings.find_max_bytes_per_item,
        max_file_bytes=settings.find_max_document_bytes,
        max_pages=settings.find_max_pages,
        memory=settings.find_extract_memory_mb * 1024 * 1024,
        cpu_seconds=seconds,
        seconds=float(seconds),
        ocr=settings.find_ocr_languages if settings.find_ocr else "",
        ocr_pixels=settings.find_ocr_max_pixels,
        ocr_pages=settings.find_ocr_max_pages,
    )


def ocr_problem(settings: Settings) -> str | None:
    """With FIND_OCR on: what stops it here (no tesseract, a language without data), else None."""
    if not settings.find_ocr:
        return None
    return missing(settings.find_ocr_languages.split("+"))


def embedder_of(settings: Settings) -> Embedder | None:
    """The model FIND_MEANING names (docs/ADR/0078), or None when finding by meaning is off."""
    if settings.find_meaning == "off":
        return None
    # imported here for start-up cost: numpy comes with them
    from nextcloud_mcp_server.index.embedding import EndpointModel, ShippedModel

    if (
        settings.find_meaning == "endpoint"
        and settings.find_embeddings_url
        and settings.find_embeddings_model
    ):
        key = settings.find_embeddings_api_key
        return EndpointModel(
            settings.find_embeddings_url,
            settings.find_embeddings_model,
            api_key=key.get_secret_value() if key is not None else None,
            timeout=settings.find_embeddings_timeout_seconds,
        )
    return ShippedModel()


class FindService:
    def __init__(self, settings: Settings) -> None:
        problem = ocr_problem(settings)  # at start, in words: not at the first image
        if problem is not None:
            raise ConfigError([problem])
        self.settings = settings
        self._index: FindIndex | None = None
        self._vectors: VectorStore | None = None
        self._meaning: Meaning | None = None
        self._embedder: Embedder | None = None
        self._lock = asyncio.Lock()
        self._background: dict[str, asyncio.Task[int]] = {}
        self._forgotten: dict[str, float] = {}  # user -> when (monotonic) their index was last forgotten

    def _make(self) -> tuple[FindIndex, VectorStore]:
        if self.settings.store_url is not None:
            # imported here for start-up cost: psycopg only where PostgreSQL is used
            from nextcloud_mcp_server.index.postgres import PostgresIndex
            from nextcloud_mcp_server.index.postgres_vectors import PostgresVectors

            languages = [x for x in self.settings.find_languages.split(",") if x]
            # a connection per background round holds its user's lock (docs/ADR/0084)
            pool = 4 + self.settings.find_background_users_at_once
            url = self.settings.store_url.get_secret_value()
            index = PostgresIndex(url, languages=languages, pool_size=pool)
            return index, PostgresVectors(index)
        from nextcloud_mcp_server.index.sqlite import SQLiteIndex
        from nextcloud_mcp_server.index.sqlite_vectors import SQLiteVectors

        found = SQLiteIndex(index_path(self.settings))
        return found, SQLiteVectors(found)

    async def index(self) -> FindIndex:
        """The index, opened (once) on first use."""
        async with self._lock:
            if self._index is None:
                made, vectors = self._make()
                await made.open()
                await vectors.open()  # the passages' table exists even with meaning off: forget empties it
                self._index, self._vectors = made, vectors
                self._embedder = embedder_of(self.settings)
                if self._embedder is not None:
                    from nextcloud_mcp_server.index.meaning import Meaning  # start-up cost: numpy
                    from nextcloud_mcp_server.index.vector_cache import VectorCache

                    cache = VectorCache(
                        total_bytes=self.settings.find_vector_cache_mb << 20,
                        user_bytes=self.settings.find_vector_cache_user_mb << 20,
                    )
                    self._meaning = Meaning(self._embedder, vectors, cache)
            return self._index

    async def meaning(self) -> Meaning | None:
        """Finding by meaning over the opened index, or None when FIND_MEANING=off."""
        await self.index()
        return self._meaning

    def continue_in_background(self, user: str) -> None:
        """Go on embedding the user's items after the answer (from the index's own text: no
        credential is needed), one task per user, each bounded in items and time, resting
        between items so that other calls keep their pace (docs/ADR/0091)."""
        if self._meaning is None or (user in self._background and not self._background[user].done()):
            return
        # imported here for start-up cost: numpy comes with meaning.py
        from nextcloud_mcp_server.index.meaning import BACKGROUND_REST

        run = self._meaning.catch_up(user, max_items=2_000, seconds=120.0, rest=BACKGROUND_REST)
        task = asyncio.create_task(run)
        self._background[user] = task
        task.add_done_callback(self._settled)

    def changed(self, user: str) -> None:
        """The user's index changed (a round read or removed items): embeddings may be due."""
        if self._meaning is not None:
            self._meaning.changed(user)

    def _settled(self, task: asyncio.Task[int]) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.warning("embedding in the background failed: %s", task.exception())

    def made(self) -> bool:
        """Whether there may be an index to read (opened, PostgreSQL, or its SQLite file exists)."""
        return (
            self._index is not None
            or self.settings.store_url is not None
            or index_path(self.settings).exists()
        )

    async def forget(self, user: str) -> int:
        """Delete everything kept for `user` (a revoked grant, or the person asked); an SQLite
        index that was never made is not made for this."""
        if not self.made():
            return 0
        self._forgotten[user] = time.monotonic()
        self.changed(user)
        task = self._background.pop(user, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        removed = await (await self.index()).forget(user)
        if self._meaning is not None:  # its passages and what this process keeps of them
            await self._meaning.forget(user)
        elif self._vectors is not None:
            await self._vectors.forget(user)
        if removed:
            logger.info("the find index of a user was deleted (%d items)", removed)
        return removed

    def forgotten_since(self, user: str, moment: float) -> bool:
        """Whether `user`'s index was forgotten in this process at or after `moment` (monotonic):
        a background round under way then must not leave what it read behind."""
        return self._forgotten.get(user, -1.0) >= moment

    async def close(self) -> None:
        tasks = list(self._background.values())
        self._background.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        async with self._lock:
            if self._index is not None:
                index, self._index = self._index, None
                self._vectors = self._meaning = None
                await index.close()
            closing = getattr(self._embedder, "aclose", None)
            if closing is not None:
                await closing()
