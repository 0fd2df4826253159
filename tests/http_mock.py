"""Fake answers for the outbound HTTP client in unit tests of error paths.

`@http_mock.mock` on a test routes every request that any `BoundedClient` (Nextcloud's, the
identity provider's, the metadata documents') sends during the test to the routes the test
declared (`http_mock.get(url).mock(...)`); a request no route matches fails the test. Everything
above the wire runs for real: bounds on the answer, retries, error mapping. Routes record their
calls. A route's URL without a query matches the same URL with any query.

    http_mock.get(f"{BASE}/x").mock(return_value=http_mock.Response(200, json={"a": 1}))
    http_mock.post(url).mock(side_effect=[ExchangeFailed("reset"), http_mock.Response(204)])
"""

from __future__ import annotations

import functools
import inspect
import json as jsonlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from nextcloud_mcp_server.outbound.answers import StreamedAnswer
from nextcloud_mcp_server.outbound.client import Body, BoundedClient

__all__ = ["Request", "Response", "Route", "get", "mock", "post", "put", "request"]

_UNSET: Any = object()


class Response:
    """What a route answers: a status, headers and a body (`json=`, `text=` or `content=`)."""

    def __init__(
        self,
        status_code: int = 200,
        *,
        json: Any = _UNSET,
        text: str | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    ) -> None:
        self.status_code = status_code
        pairs = headers.items() if isinstance(headers, Mapping) else (headers or [])
        self.headers: CIMultiDict[str] = CIMultiDict(pairs)
        if json is not _UNSET:
            content = jsonlib.dumps(json).encode()
            self.headers.setdefault("Content-Type", "application/json")
        elif text is not None:
            content = text.encode()
            self.headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        self.content = content or b""
        self.headers.setdefault("Content-Length", str(len(self.content)))


@dataclass
class Request:
    """A request as it would have left: method, URL, headers and the whole body."""

    method: str
    url: URL
    headers: CIMultiDictProxy[str]
    content: bytes


@dataclass
class Call:
    request: Request
    response: Response | None


class Calls(list[Call]):
    @property
    def last(self) -> Call:
        return self[-1]


@dataclass
class Route:
    method: str
    url: str
    calls: Calls = field(default_factory=Calls)
    return_value: Response | None = None
    _side_effect: Any = None

    @property
    def side_effect(self) -> Any:
        return self._side_effect

    @side_effect.setter
    def side_effect(self, value: Any) -> None:
        self._side_effect = iter(value) if isinstance(value, list | tuple) else value

    def mock(self, *, return_value: Response | None = None, side_effect: Any = None) -> Route:
        self.return_value = return_value
        self.side_effect = side_effect
        return self

    def respond(self, status_code: int = 200, **kwargs: Any) -> Route:
        return self.mock(return_value=Response(status_code, **kwargs))

    @property
    def call_count(self) -> int:
        return len(self.calls)

    @property
    def called(self) -> bool:
        return bool(self.calls)

    def matches(self, request: Request) -> bool:
        if request.method != self.method:
            return False
        wanted, url = URL(self.url), request.url
        same_place = (url.scheme, url.host, url.port, url.path) == (
            wanted.scheme,
            wanted.host,
            wanted.port,
            wanted.path,
        )
        return same_place and (not wanted.query_string or wanted.query == url.query)

    def answer(self, request: Request) -> Response:
        effect = self._side_effect
        if isinstance(effect, Iterator):
            effect = next(effect)
        if effect is None:
            response = self.return_value if self.return_value is not None else Response(200)
        elif isinstance(effect, BaseException) or (
            isinstance(effect, type) and issubclass(effect, BaseException)
        ):
            self.calls.append(Call(request, None))
            raise effect
        elif isinstance(effect, Response):
            response = effect
        else:
            response = effect(request)
        self.calls.append(Call(request, response))
        return response


class _Router:
    def __init__(self) -> None:
        self.routes: list[Route] = []

    def route(self, method: str, url: str) -> Route:
        found = Route(method.upper(), url)
        self.routes.insert(0, found)  # the latest declaration wins, as in respx
        return found

    def handle(self, request: Request) -> Response:
        for route in self.routes:
            if route.matches(request):
                return route.answer(request)
        raise AssertionError(f"no fake answer for {request.method} {request.url}")


_active: list[_Router] = []


def _router() -> _Router:
    if not _active:
        raise RuntimeError("declare routes inside a test decorated with @http_mock.mock")
    return _active[-1]


def request(method: str, url: str) -> Route:
    return _router().route(method, url)


def get(url: str) -> Route:
    return request("GET", url)


def post(url: str) -> Route:
    return request("POST", url)


def put(url: str) -> Route:
    return request("PUT", url)


async def _whole(data: Body) -> bytes:
    if data is None:
        return b""
    if isinstance(data, bytes):
        return data
    return b"".join([chunk async for chunk in data])


def _streamed(response: Response, url: str, limit: int | None) -> StreamedAnswer:
    parts = [response.content] if response.content else []

    async def read_chunk() -> bytes:
        return parts.pop(0) if parts else b""

    return StreamedAnswer(
        response.status_code,
        CIMultiDictProxy(response.headers),
        url,
        read_chunk=read_chunk,
        release=lambda reusable: None,
        limit=limit,
    )


def mock(test: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test with every `BoundedClient` answering from the declared routes."""
    if not inspect.iscoroutinefunction(test):
        raise TypeError("http_mock.mock decorates async tests")

    @functools.wraps(test)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        router = _Router()
        original = BoundedClient._transmit

        async def transmit(
            self: BoundedClient,
            method: str,
            url: str,
            headers: dict[str, str],
            data: Body,
            limit: int | None,
            deadline: float | None,
        ) -> StreamedAnswer:
            sent = Request(
                method, URL(url, encoded=True), CIMultiDictProxy(CIMultiDict(headers)), await _whole(data)
            )
            return _streamed(router.handle(sent), url, limit)

        _active.append(router)
        BoundedClient._transmit = transmit  # type: ignore[method-assign]
        try:
            return await test(*args, **kwargs)
        finally:
            BoundedClient._transmit = original  # type: ignore[method-assign]
            _active.pop()

    return wrapper
