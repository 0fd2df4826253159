"""Passages' vectors beside the words, and the nearest passages to a question (docs/ADR/0078).

Both engines keep vectors as plain binary columns (float32, little-endian) in `find_passages`,
keyed by the user, the model's identity, the item and the passage's number, and carrying the
item's version when it was embedded. A passage counts only while its item still has that
version: an edited, moved or deleted item is never answered from old vectors, and `prune` drops
them. Scoring is exact (every candidate passage of the user, numpy), which at a person's volume
is a few milliseconds (the ADR's figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from nextcloud_mcp_server.index.embedding import Vectors, similarity
from nextcloud_mcp_server.index.engine import Filters, Hit, bounded

__all__ = [
    "EXCERPT_CHARS",
    "PASSAGE_CHARS",
    "Candidate",
    "Pending",
    "Span",
    "VectorStore",
    "best_per_item",
    "excerpt_of",
    "vector_bytes",
]

EXCERPT_CHARS = 300
# A candidate carries its passage only, at most this many characters of it (what an excerpt
# needs): never the item's whole text once per passage, which made a query read megabytes.
PASSAGE_CHARS = 2 * EXCERPT_CHARS


@dataclass(frozen=True)
class Pending:
    """An item whose current version has no vectors for the model yet."""

    kind: str
    key: str
    version: str
    title: str
    body: str


@dataclass(frozen=True)
class Span:
    seq: int
    start: int
    length: int


@dataclass(frozen=True)
class Candidate:
    """A passage of a current item, with what a hit shows."""

    kind: str
    key: str
    title: str
    location: str
    modified: float
    version: str
    start: int
    length: int
    body: str  # text holding the passage at body[start:start + length] (engines: the passage alone)
    vector: bytes


class VectorStore(Protocol):
    async def open(self) -> None: ...

    async def pending(self, user: str, model: str, limit: int) -> list[Pending]: ...

    async def put(
        self, user: str, model: str, item: Pending, spans: Sequence[Span], vectors: Vectors
    ) -> None: ...

    async def candidates(self, user: str, model: str, filters: Filters) -> list[Candidate]: ...

    async def counts(self, user: str, model: str) -> tuple[int, int]:
        """(items with current vectors for `model`, items)."""

    async def prune(self, user: str, model: str) -> int:
        """Drop vectors of other models and of items gone or changed; how many passages."""

    async def forget(self, user: str) -> int: ...


def excerpt_of(candidate: Candidate) -> str:
    text = candidate.body[candidate.start : candidate.start + candidate.length].strip()
    if len(text) <= EXCERPT_CHARS:
        return text
    cut = text[:EXCERPT_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > EXCERPT_CHARS // 2 else cut) + " …"


def best_per_item(
    candidates: Sequence[Candidate], query: Vectors, *, limit: int, offset: int = 0, floor: float = 0.0
) -> list[Hit]:
    """The items whose best passage is nearest to `query`, best first, each shown by that passage;
    passages scoring below `floor` are not answers."""
    limit, offset = bounded(limit, offset)
    if not candidates:
        return []
    width = query.shape[1]
    usable = [c for c in candidates if len(c.vector) == 4 * width]
    if not usable:
        return []
    matrix = np.frombuffer(b"".join(c.vector for c in usable), dtype="<f4").reshape(len(usable), width)
    scores = similarity(matrix, query)
    best: dict[tuple[str, str], int] = {}
    for i, candidate in enumerate(usable):
        item = (candidate.kind, candidate.key)
        if scores[i] >= floor and (item not in best or scores[i] > scores[best[item]]):
            best[item] = i
    ranked = sorted(best.values(), key=lambda i: (-float(scores[i]), usable[i].kind, usable[i].key))
    hits = []
    for i in ranked[offset : offset + limit]:
        c = usable[i]
        hits.append(Hit(c.kind, c.key, c.title, c.location, c.modified, c.version, excerpt_of(c)))
    return hits


def vector_bytes(row: Vectors) -> bytes:
    return np.asarray(row, dtype="<f4").tobytes()
