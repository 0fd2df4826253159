"""Passages' vectors beside the words, and the nearest passages to a question (docs/ADR/0078).

Both engines keep vectors as plain binary columns (float32, little-endian) in `find_passages`,
keyed by the user, the model's identity, the item and the passage's number, and carrying the
item's version when it was embedded. A passage counts only while its item still has that
version: an edited, moved or deleted item is never answered from old vectors, and `prune` drops
them. Scoring is exact (every candidate passage of the user, numpy), which at a person's volume
is a few milliseconds (the ADR's figures); `vector_cache.py` keeps a user's passages in memory
between calls while their change mark stays (docs/ADR/0095).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from nextcloud_mcp_server.index.embedding import Vectors
from nextcloud_mcp_server.index.engine import Filters

__all__ = [
    "EXCERPT_CHARS",
    "PASSAGE_CHARS",
    "Candidate",
    "Pending",
    "Span",
    "VectorStore",
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

    async def mark(self, user: str) -> str | None:
        """The user's change mark: a new one with every write of their items or passages (in the
        same transaction), None when nothing of theirs is kept (docs/ADR/0095)."""


def excerpt_of(candidate: Candidate) -> str:
    text = candidate.body[candidate.start : candidate.start + candidate.length].strip()
    if len(text) <= EXCERPT_CHARS:
        return text
    cut = text[:EXCERPT_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > EXCERPT_CHARS // 2 else cut) + " …"


def vector_bytes(row: Vectors) -> bytes:
    return np.asarray(row, dtype="<f4").tobytes()
