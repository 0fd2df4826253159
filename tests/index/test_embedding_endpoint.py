"""An OpenAI-compatible embeddings endpoint: the same vectors as the shipped model behind it,
retries where the answer means "again", and plain errors for everything an endpoint can get wrong."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aiohttp import web

from nextcloud_mcp_server.index.embedding import MAX_BATCH, EmbeddingError, EndpointModel, ShippedModel
from tests.embeddings_endpoint import serve_embeddings


async def test_the_endpoint_gives_the_shipped_models_vectors_with_the_key() -> None:
    async with serve_embeddings() as (url, received):
        model = EndpointModel(url, "wordllama", api_key="k-123")
        try:
            got = await model.embed(["boiler repair", "flight to Lisbon"])
        finally:
            await model.aclose()
    expected = await ShippedModel().embed(["boiler repair", "flight to Lisbon"])
    assert np.allclose(got, expected, atol=1e-5)
    assert received[0]["authorization"] == "Bearer k-123"
    assert received[0]["body"] == {"model": "wordllama", "input": ["boiler repair", "flight to Lisbon"]}
    assert model.identity == f"endpoint:{url}/embeddings#wordllama"


async def test_a_busy_endpoint_is_asked_again() -> None:
    answers = [web.Response(status=503), web.Response(status=429)]

    def busy_twice(_: dict[str, Any]) -> web.Response | None:
        return answers.pop(0) if answers else None

    async with serve_embeddings(busy_twice) as (url, received):
        model = EndpointModel(url, "m", attempts=3)
        try:
            got = await model.embed(["x"])
        finally:
            await model.aclose()
    assert got.shape == (1, 256)
    assert len(received) == 3


def _answer(payload: Any, status: int = 200) -> web.Response:
    if isinstance(payload, str):  # a body as it comes, JSON or not
        return web.Response(text=payload, status=status, content_type="application/json")
    return web.json_response(payload, status=status)


@pytest.mark.parametrize(
    ("payload", "status", "said"),
    [
        ({"error": "no such model"}, 404, "FIND_EMBEDDINGS_URL"),
        ({"error": "bad key"}, 401, "FIND_EMBEDDINGS_API_KEY"),
        ({"data": []}, 200, "something else"),
        ({"data": [{"index": 0, "embedding": "abc"}]}, 200, "not a list of numbers"),
        ({"data": [{"index": 0, "embedding": [1.0, "x"]}]}, 200, "not a number"),
        ({"data": [{"index": 0, "embedding": [float("nan"), 1.0]}]}, 200, "finite"),
        ({"data": [{"index": 0, "embedding": [0.5] * 5000}]}, 200, "not a list of numbers"),
        (["not", "an", "object"], 200, "something else"),
        ("<html>busy</html>", 200, "answered no JSON"),
        ("[" * 5000 + "]" * 5000, 200, "answered no JSON"),  # deeper than json's recursion
        ({"data": [{"index": "a", "embedding": [1.0]}]}, 200, "index is not a whole number"),
    ],
)
async def test_what_an_endpoint_gets_wrong_is_said_plainly(payload: Any, status: int, said: str) -> None:
    async with serve_embeddings(lambda _: _answer(payload, status)) as (url, _):
        model = EndpointModel(url, "m", attempts=1)
        try:
            with pytest.raises(EmbeddingError, match=said):
                await model.embed(["x"])
        finally:
            await model.aclose()


async def test_vectors_of_changing_length_are_refused() -> None:
    widths = [3, 4]
    async with serve_embeddings(
        lambda _: _answer({"data": [{"index": 0, "embedding": [1.0] * widths.pop(0)}]})
    ) as (
        url,
        _,
    ):
        model = EndpointModel(url, "m", attempts=1)
        try:
            assert (await model.embed(["a"])).shape == (1, 3)
            with pytest.raises(EmbeddingError, match="different lengths"):
                await model.embed(["b"])
        finally:
            await model.aclose()


async def test_an_endpoint_that_is_not_there_is_named() -> None:
    model = EndpointModel("http://127.0.0.1:9/v1", "m", attempts=2, timeout=5)
    try:
        with pytest.raises(EmbeddingError, match=r"127\.0\.0\.1:9/v1/embeddings did not answer"):
            await model.embed(["x"])
    finally:
        await model.aclose()


async def test_batches_and_texts_are_bounded() -> None:
    with pytest.raises(EmbeddingError, match=f"at most {MAX_BATCH}"):
        await ShippedModel().embed(["x"] * (MAX_BATCH + 1))
    async with serve_embeddings() as (url, received):
        model = EndpointModel(url, "m")
        try:
            await model.embed(["y" * 100_000])
        finally:
            await model.aclose()
    assert len(received[0]["body"]["input"][0]) == 2_000
