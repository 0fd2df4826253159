"""Finding by meaning: a user's items embedded passage by passage, and the nearest passages to a
question (docs/ADR/0078). Knows the index's engines only through `VectorStore`."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import numpy as np

from nextcloud_mcp_server.index.embedding import MAX_BATCH, Embedder
from nextcloud_mcp_server.index.engine import Filters, Hit
from nextcloud_mcp_server.index.passages import passages
from nextcloud_mcp_server.index.vector_cache import Matrix, VectorCache
from nextcloud_mcp_server.index.vectors import Pending, Span, VectorStore

__all__ = ["BACKGROUND_REST", "CACHE_MB", "CACHE_USER_MB", "MIN_SIMILARITY", "Meaning", "Progress"]

# Below this cosine a passage is taken as unrelated (the shipped model's unrelated pairs score
# -0.10 to 0.13, its paraphrases 0.13 to 0.40: docs/ADR/0078).
MIN_SIMILARITY = 0.10
# A run in the background waits this many times as long as each item took before the next one,
# so the process works on embedding at most a quarter of the time and other calls get the rest
# (docs/ADR/0091: embedding the seeded corpus at full speed slowed other calls 1.6 to 2.2 times).
BACKGROUND_REST = 3.0
# The passages kept in memory between calls (docs/ADR/0095), unless told: in all, and per user
# (the seeded benchmark's 2,085 items are about 4 MB).
CACHE_MB = 64
CACHE_USER_MB = 32


@dataclass(frozen=True)
class Progress:
    embedded: int  # items with vectors of the current model
    items: int


class Meaning:
    def __init__(self, embedder: Embedder, store: VectorStore, cache: VectorCache | None = None) -> None:
        self.embedder = embedder
        self.store = store
        self.cache = cache or VectorCache(total_bytes=CACHE_MB << 20, user_bytes=CACHE_USER_MB << 20)
        self._users: dict[str, asyncio.Lock] = {}
        # users with nothing left to embed as far as this process knows, and their progress then;
        # dropped when their index changes here (`changed`), so a warm call skips the look
        self._settled: dict[str, Progress] = {}
        self._changes: dict[str, int] = {}  # per user, how often `changed` was told (a race guard)

    @property
    def model(self) -> str:
        return self.embedder.identity

    async def catch_up(
        self, user: str, *, max_items: int = 200, seconds: float = 10.0, rest: float = 0.0
    ) -> int:
        """Embed up to `max_items` of the user's items that have no vectors of this model at their
        current version, for at most about `seconds`; how many were embedded. One run per user
        at a time; vectors of other models and of changed or deleted items are dropped first.
        `rest`: after each item, wait `rest` times as long as it took (a background run)."""
        lock = self._users.setdefault(user, asyncio.Lock())
        if lock.locked():
            return 0
        async with lock:
            await self.store.prune(user, self.model)
            self._settled.pop(user, None)
            changes = self._changes.get(user, 0)
            stop = time.monotonic() + seconds
            done = 0
            began = time.monotonic()
            while done < max_items and time.monotonic() < stop:
                batch = await self.store.pending(user, self.model, min(16, max_items - done))
                if not batch:
                    settled = await self.progress(user)
                    if self._changes.get(user, 0) == changes:  # nothing was written meanwhile
                        self._settled[user] = settled
                    break
                for item in batch:
                    await self._embed_item(user, item)
                    done += 1
                    if rest > 0:  # what the item took, reading its batch included; never past `seconds`
                        now = time.monotonic()
                        await asyncio.sleep(max(0.0, min(rest * (now - began), stop - now)))
                        began = time.monotonic()
            return done

    def changed(self, user: str) -> None:
        """The user's index changed in this process: there may be something to embed."""
        self._settled.pop(user, None)
        self._changes[user] = self._changes.get(user, 0) + 1

    def settled(self, user: str) -> Progress | None:
        """The user's progress when this process last found nothing left to embed, unless their
        index changed here since (another replica's rounds embed what they read themselves)."""
        return self._settled.get(user)

    async def _embed_item(self, user: str, item: Pending) -> None:
        parts = passages(item.title, item.body)
        spans = [Span(p.seq, p.start, p.end - p.start) for p in parts]
        texts = [p.text for p in parts]
        rows = [await self.embedder.embed(texts[i : i + MAX_BATCH]) for i in range(0, len(texts), MAX_BATCH)]
        if rows:
            await self.store.put(user, self.model, item, spans, np.vstack(rows))

    async def nearest(
        self, user: str, question: str, filters: Filters, *, limit: int, offset: int = 0
    ) -> list[Hit]:
        query = await self.embedder.embed([question])
        matrix = await self._matrix(user, filters, query.shape[1])
        return matrix.nearest(query, filters, limit=limit, offset=offset, floor=MIN_SIMILARITY)

    async def _matrix(self, user: str, filters: Filters, width: int) -> Matrix:
        """The user's current passages: from memory while their change mark stays, else read
        (and kept, within the cache's bounds). A folder filter is the engine's to apply (its own
        reading of "in this folder or below"): those are read each time."""
        folder = filters.folder is not None and bool(filters.folder.strip("/"))
        if folder or not self.cache.enabled:
            candidates = await self.store.candidates(user, self.model, filters)
            return await asyncio.to_thread(Matrix.of, candidates, width)
        ticket = self.cache.ticket(user)
        mark = await self.store.mark(user)  # before the passages: a write after it moves it again
        if mark is not None:
            kept = self.cache.get(user, self.model, mark, width)
            if kept is not None:
                return kept
        candidates = await self.store.candidates(user, self.model, Filters())
        matrix = await asyncio.to_thread(Matrix.of, candidates, width)
        if mark is None:  # nothing kept for the user (forgotten, or never written since)
            self.cache.drop(user)
        else:
            self.cache.put(user, self.model, mark, matrix, ticket)
        return matrix

    async def progress(self, user: str) -> Progress:
        embedded, items = await self.store.counts(user, self.model)
        return Progress(embedded, items)

    async def forget(self, user: str) -> int:
        self._users.pop(user, None)
        self._settled.pop(user, None)
        self.cache.drop(user)
        return await self.store.forget(user)
