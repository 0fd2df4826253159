"""Reciprocal rank fusion of the words' and the meaning's rankings (docs/ADR/0078).

Each ranking gives an item `1 / (K + rank)`; an item's score is the sum over the rankings that
hold it. It needs no comparable scores (BM25 and cosine are not), and an item both rankings
agree on rises above one only one of them likes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

__all__ = ["K", "fuse"]

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
