"""Text to vectors for finding by meaning (docs/ADR/0078).

Two sources, one interface:
- `ShippedModel`: WordLlama's static embedding (256 dimensions), whose weights and tokenizer are
  files inside its wheel. It is loaded from the installed package only; a download is never tried.
- `EndpointModel`: any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, LocalAI, vLLM, a hosted
  API), through the bounded outbound client, with retries for the answers that mean "try again".

A model's `identity` names it and its dimensions; vectors of two identities are never compared
(the index stores the identity beside each vector). Every vector is float32 and of unit length, so
a dot product is the cosine similarity.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from nextcloud_mcp_server.index.engine import EmbeddingError
from nextcloud_mcp_server.outbound.client import BoundedClient, Bounds
from nextcloud_mcp_server.outbound.errors import OutboundError

__all__ = [
    "MAX_BATCH",
    "MAX_TEXT_CHARS",
    "Embedder",
    "EmbeddingError",
    "EndpointModel",
    "ShippedModel",
    "Vectors",
    "similarity",
    "unit_rows",
]

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]  # one row per text

MAX_BATCH = 64  # texts per call to a model
MAX_TEXT_CHARS = 2_000  # a passage is cut to this before it is embedded
MAX_DIMENSIONS = 4_096
SHIPPED_CONFIG = "l2_supercat"
SHIPPED_DIMENSIONS = 256
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class Embedder(Protocol):
    @property
    def identity(self) -> str:
        """The model and its dimensions; vectors of different identities are never compared."""

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text (at most MAX_BATCH texts)."""


def unit_rows(matrix: npt.ArrayLike) -> Vectors:
    """`matrix` as float32 rows of length one (a zero row stays zero)."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim != 2:
        raise EmbeddingError(f"the model answered {rows.ndim} dimensions of arrays, not a list of vectors")
    if not np.all(np.isfinite(rows)):
        raise EmbeddingError("the model answered a vector with a value that is not a finite number")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(rows / norms, dtype=np.float32)


def _checked(texts: Sequence[str]) -> list[str]:
    if len(texts) > MAX_BATCH:
        raise EmbeddingError(f"at most {MAX_BATCH} texts per call, not {len(texts)}")
    return [t[:MAX_TEXT_CHARS] for t in texts]


class ShippedModel:
    """WordLlama's static embedding, loaded once from the installed wheel in a worker thread."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = asyncio.Lock()

    @property
    def identity(self) -> str:
        return f"wordllama-{SHIPPED_CONFIG}-{SHIPPED_DIMENSIONS}"

    @staticmethod
    def _load() -> Any:
        # imported here for start-up cost: numpy, tokenizers and the weights only when meaning is asked
        import wordllama

        # The wheel holds `weights/` and `tokenizers/` in the package folder, which is the layout
        # the loader expects of a cache folder; with downloads disabled it never goes online.
        folder = Path(wordllama.__file__).parent
        return wordllama.WordLlama.load(
            config=SHIPPED_CONFIG, dim=SHIPPED_DIMENSIONS, cache_dir=folder, disable_download=True
        )

    async def model(self) -> Any:
        async with self._lock:
            if self._model is None:
                try:
                    self._model = await asyncio.to_thread(self._load)
                except (ImportError, OSError, ValueError) as exc:
                    raise EmbeddingError(f"the shipped embedding model cannot be loaded: {exc}") from None
            return self._model

    async def embed(self, texts: Sequence[str]) -> Vectors:
        batch = _checked(texts)
        if not batch:
            return np.zeros((0, SHIPPED_DIMENSIONS), dtype=np.float32)
        model = await self.model()
        return unit_rows(await asyncio.to_thread(model.embed, batch, norm=True))


class EndpointModel:
    """An OpenAI-compatible embeddings endpoint (`POST {base}/embeddings`)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        attempts: int = 3,
        client: BoundedClient | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self._api_key = api_key
        self._attempts = max(1, attempts)
        self._client = client or BoundedClient(
            Bounds(
                answer_bytes=64 * 1024 * 1024, deadline=timeout, read_timeout=timeout, connect_timeout=10.0
            ),
            max_connections=4,
        )
        self._dimensions: int | None = None

    @property
    def identity(self) -> str:
        return f"endpoint:{self.url}#{self.model}"

    async def aclose(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        batch = _checked(texts)
        if not batch:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = json.dumps({"model": self.model, "input": batch}).encode()
        for attempt in range(1, self._attempts + 1):
            try:
                answer = await self._client.request("POST", self.url, headers=headers, data=body)
            except OutboundError as exc:
                if attempt == self._attempts:
                    raise EmbeddingError(
                        f"the embeddings endpoint {self.url} did not answer: {exc}"
                    ) from None
            else:
                if answer.status_code == 200:
                    try:
                        payload = answer.json()
                    except (ValueError, RecursionError):
                        raise EmbeddingError(f"the embeddings endpoint {self.url} answered no JSON") from None
                    return self._vectors(payload, len(batch))
                if answer.status_code not in _RETRY_STATUSES or attempt == self._attempts:
                    raise EmbeddingError(self._refusal(answer.status_code, answer.text))
            await asyncio.sleep(min(4.0, 0.25 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _refusal(self, status: int, text: str) -> str:
        hint = {
            401: "check FIND_EMBEDDINGS_API_KEY",
            403: "check FIND_EMBEDDINGS_API_KEY",
            404: "check FIND_EMBEDDINGS_URL (it ends before /embeddings, e.g. http://localhost:11434/v1)"
            " and FIND_EMBEDDINGS_MODEL",
        }.get(status, "see the endpoint's own log")
        return f"the embeddings endpoint {self.url} answered {status} ({text[:200]!r}): {hint}"

    def _vectors(self, payload: Any, count: int) -> Vectors:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or len(data) != count:
            raise EmbeddingError(f"the embeddings endpoint answered {count} texts with something else")
        ordered = sorted(data, key=_place)
        rows: list[Any] = [d.get("embedding") if isinstance(d, dict) else None for d in ordered]
        if not all(isinstance(r, list) and 0 < len(r) <= MAX_DIMENSIONS for r in rows):
            raise EmbeddingError("the embeddings endpoint answered a vector that is not a list of numbers")
        widths = {len(r) for r in rows if isinstance(r, list)}
        if len(widths) != 1 or (self._dimensions is not None and widths != {self._dimensions}):
            raise EmbeddingError("the embeddings endpoint answered vectors of different lengths")
        self._dimensions = widths.pop()
        try:
            return unit_rows(rows)
        except (TypeError, ValueError):
            raise EmbeddingError(
                "the embeddings endpoint answered a vector with something not a number"
            ) from None


def _place(item: Any) -> int:
    """Where an answered vector goes: its `index` (none: where it stands)."""
    place = item.get("index", 0) if isinstance(item, dict) else 0
    if not isinstance(place, int) or isinstance(place, bool):
        raise EmbeddingError("the embeddings endpoint answered a vector whose index is not a whole number")
    return place


def similarity(matrix: Vectors, query: Vectors) -> npt.NDArray[np.float32]:
    """Cosine similarity of each row of `matrix` to the one-row `query` (both unit length).

    An elementwise product and sum, not a BLAS call: a matrix-vector product through BLAS starts
    threads that compete with the event loop under load (docs/ADR/0078)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query[0], optimize=False)
    return scores
