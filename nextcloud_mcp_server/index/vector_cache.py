"""A user's passages kept in memory between calls, ready to score (docs/ADR/0095).

`Matrix` holds one user's current passages for one model: their vectors as one float32 matrix,
each passage's excerpt and item, and each item's kind, key, title, place, time and version.
Scoring is one product with the question's vector and a sort; the filters on kinds and times
are masks over the items.

`VectorCache` keeps, per user, the matrix of their last search with the index's change mark it
was read under (`VectorStore.mark`: both engines set a new mark in the same transaction as any
write to the user's items or passages). A call reads the mark, one small row, and answers from
memory when it is the same; otherwise it reads the passages again. So a write by another process
or replica is never answered around. It is bounded per user (a larger matrix is used once and not
kept) and in total (the least recently used go first), entries unused for `idle_seconds` go, and
a user's entry goes when their index is forgotten here (another replica's forget changes the mark).
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nextcloud_mcp_server.index.embedding import Vectors, similarity
from nextcloud_mcp_server.index.engine import Filters, Hit, bounded
from nextcloud_mcp_server.index.vectors import Candidate, excerpt_of

__all__ = ["Matrix", "VectorCache"]


@dataclass(frozen=True)
class _Items:
    kinds: tuple[str, ...]
    keys: tuple[str, ...]
    titles: tuple[str, ...]
    locations: tuple[str, ...]
    versions: tuple[str, ...]
    modified: npt.NDArray[np.float64]


@dataclass(frozen=True)
class Matrix:
    """One user's passages for one model, of one width (the model's)."""

    width: int
    vectors: Vectors  # one row per passage
    owners: npt.NDArray[np.intp]  # per passage: its item's number in `items`
    excerpts: tuple[str, ...]  # per passage: what a hit by it shows
    items: _Items
    size: int  # bytes, about

    @classmethod
    def of(cls, candidates: Sequence[Candidate], width: int) -> Matrix:
        """The passages of `candidates` whose vector has `width` dimensions."""
        usable = [c for c in candidates if len(c.vector) == 4 * width]
        numbers: dict[tuple[str, str], int] = {}
        owners: list[int] = []
        first: list[Candidate] = []
        for c in usable:
            number = numbers.setdefault((c.kind, c.key), len(numbers))
            if number == len(first):
                first.append(c)
            owners.append(number)
        vectors = np.frombuffer(b"".join(c.vector for c in usable), dtype="<f4").reshape(len(usable), width)
        excerpts = tuple(excerpt_of(c) for c in usable)
        items = _Items(
            kinds=tuple(c.kind for c in first),
            keys=tuple(c.key for c in first),
            titles=tuple(c.title for c in first),
            locations=tuple(c.location for c in first),
            versions=tuple(c.version for c in first),
            modified=np.array([c.modified for c in first], dtype=np.float64),
        )
        texts = (*excerpts, *items.kinds, *items.keys, *items.titles, *items.locations, *items.versions)
        size = (
            vectors.nbytes
            + 8 * len(owners)
            + items.modified.nbytes
            + sum(sys.getsizeof(t) for t in texts)
            + 8 * len(texts)  # the tuples' slots
        )
        return cls(width, vectors, np.array(owners, dtype=np.intp), excerpts, items, size)

    def __len__(self) -> int:
        return len(self.excerpts)

    def _wanted(self, filters: Filters) -> npt.NDArray[np.bool_]:
        """Per item: kept by the kinds and times of `filters` (a folder is the caller's to apply)."""
        wanted = np.ones(len(self.items.keys), dtype=np.bool_)
        if filters.kinds is not None:
            wanted &= np.array([k in filters.kinds for k in self.items.kinds], dtype=np.bool_)
        if filters.changed_after is not None:
            wanted &= self.items.modified >= filters.changed_after
        if filters.changed_before is not None:
            wanted &= self.items.modified < filters.changed_before
        return wanted

    def nearest(
        self, query: Vectors, filters: Filters, *, limit: int, offset: int = 0, floor: float = 0.0
    ) -> list[Hit]:
        """The items whose best passage is nearest to `query`, best first (ties by kind and key),
        each shown by that passage; passages scoring below `floor` are not answers."""
        limit, offset = bounded(limit, offset)
        if len(self) == 0 or query.shape[1] != self.width:
            return []
        scores = similarity(self.vectors, query)
        keep = np.flatnonzero(self._wanted(filters)[self.owners] & (scores >= floor))
        if keep.size == 0:
            return []
        # per item, its passages best first (a stable sort: the earlier passage wins a tie)
        order = keep[np.lexsort((-scores[keep], self.owners[keep]))]
        owners = self.owners[order]
        best = order[np.concatenate(([True], owners[1:] != owners[:-1]))]
        if len(best) > offset + limit:  # only what can be on the page is sorted (ties at its edge kept)
            edge = -np.partition(-scores[best], offset + limit - 1)[offset + limit - 1]
            best = best[scores[best] >= edge]
        items = self.items
        ranked = sorted(
            best.tolist(),
            key=lambda i: (-float(scores[i]), items.kinds[self.owners[i]], items.keys[self.owners[i]]),
        )
        hits = []
        for i in ranked[offset : offset + limit]:
            n = int(self.owners[i])
            hits.append(
                Hit(
                    items.kinds[n],
                    items.keys[n],
                    items.titles[n],
                    items.locations[n],
                    float(items.modified[n]),
                    items.versions[n],
                    self.excerpts[i],
                )
            )
        return hits


@dataclass
class _Entry:
    model: str
    mark: str
    matrix: Matrix
    used: float


class VectorCache:
    """Per user, the matrix read under a change mark; bounded in bytes per user and in total."""

    def __init__(
        self,
        *,
        total_bytes: int,
        user_bytes: int,
        idle_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_bytes = max(0, total_bytes)
        self.user_bytes = max(0, min(user_bytes, self.total_bytes))
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._dropped: dict[str, int] = {}  # per user, how often their entry was dropped (a race guard)
        self.size = 0

    @property
    def enabled(self) -> bool:
        return self.user_bytes > 0

    def __contains__(self, user: str) -> bool:
        return user in self._entries

    def ticket(self, user: str) -> int:
        """Taken before reading a user's passages; `put` keeps them only if the user's entry was
        not dropped meanwhile (their index forgotten while the read was under way)."""
        return self._dropped.get(user, 0)

    def get(self, user: str, model: str, mark: str, width: int) -> Matrix | None:
        self._expire()
        entry = self._entries.get(user)
        if entry is None:
            return None
        if entry.model != model or entry.mark != mark or entry.matrix.width != width:
            self._remove(user)
            return None
        entry.used = self._clock()
        self._entries.move_to_end(user)
        return entry.matrix

    def put(self, user: str, model: str, mark: str, matrix: Matrix, ticket: int) -> bool:
        """Keep `matrix` for `user` (replacing theirs); False when it is over the per-user bound,
        or the user's entry was dropped since `ticket`."""
        self._remove(user)
        if matrix.size > self.user_bytes or self._dropped.get(user, 0) != ticket:
            return False
        while self._entries and self.size + matrix.size > self.total_bytes:
            self._remove(next(iter(self._entries)))
        self._entries[user] = _Entry(model, mark, matrix, self._clock())
        self.size += matrix.size
        return True

    def drop(self, user: str) -> None:
        """Forget what is kept for `user` (their index was forgotten, or they are gone)."""
        self._dropped[user] = self._dropped.get(user, 0) + 1
        self._remove(user)

    def _remove(self, user: str) -> None:
        entry = self._entries.pop(user, None)
        if entry is not None:
            self.size -= entry.matrix.size

    def _expire(self) -> None:
        stale = self._clock() - self.idle_seconds
        while self._entries:
            user, entry = next(iter(self._entries.items()))
            if entry.used > stale:
                break
            self._remove(user)
