"""Reciprocal rank fusion of the words' and the meaning's rankings (docs/ADR/0078).

Each ranking gives an item `1 / (K + rank)`; an item's score is the sum over the rankings that
hold it. It needs no comparable scores (BM25 and cosine are not), and an item both rankings
agree on rises above one only one of them likes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from nextcloud_mcp_server.index.engine import Hit

__all__ = ["K", "fuse", "hybrid"]

K = 60
T = TypeVar("T", bound=Hashable)


def fuse(rankings: Sequence[Sequence[T]], *, k: int = K) -> list[T]:
    """The items of every ranking (best first in each), best first by fused score; ties keep the
    order of first appearance."""
    scores: dict[T, float] = {}
    for ranking in rankings:
        seen: set[T] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


def hybrid(by_words: Sequence[Hit], by_meaning: Sequence[Hit]) -> tuple[list[Hit], set[tuple[str, str]]]:
    """Both rankings as one: the items that have the words first, ordered by both rankings; then
    those found by meaning only. Also which items have the words. A word hit keeps its excerpt
    (its matches marked); an item found by meaning only shows its nearest passage."""
    shown = {(h.kind, h.key): h for h in reversed(by_meaning)} | {(h.kind, h.key): h for h in by_words}
    worded = {(h.kind, h.key) for h in by_words}
    fused = fuse([[(h.kind, h.key) for h in by_words], [(h.kind, h.key) for h in by_meaning]])
    order = [k for k in fused if k in worded] + [k for k in fused if k not in worded]
    return [shown[k] for k in order], worded
