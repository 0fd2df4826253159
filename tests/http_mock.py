"""Fake answers for httpx2 clients in unit tests of error paths (what respx did for httpx).

`@http_mock.mock` on a test routes every request made through an `httpx2.AsyncHTTPTransport` (the
identity provider's client) or an `Http11Transport` (the Nextcloud client's) during the test to the
routes the test declared (`http_mock.get(url).mock(...)`); a request no route matches fails the
test. Routes record their calls. A route's URL without a query matches the same URL with any query.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from nextcloud_mcp_server.nextcloud.transport import Http11Transport

__all__ = ["Route", "get", "mock", "post", "put", "request"]

Answer = httpx2.Response | BaseException | Callable[[httpx2.Request], httpx2.Response]


@dataclass
class Call:
    request: httpx2.Request
    response: httpx2.Response | None


class Calls(list[Call]):
    @property
    def last(self) -> Call:
        return self[-1]


@dataclass
class Route:
    method: str
    url: str
    calls: Calls = field(default_factory=Calls)
    return_value: httpx2.Response | None = None
    _side_effect: Any = None

    @property
    def side_effect(self) -> Any:
        return self._side_effect

    @side_effect.setter
    def side_effect(self, value: Any) -> None:
        self._side_effect = iter(value) if isinstance(value, list | tuple) else value

    def mock(self, *, return_value: httpx2.Response | None = None, side_effect: Any = None) -> Route:
        self.return_value = return_value
        self.side_effect = side_effect
        return self

    def respond(self, status_code: int = 200, **kwargs: Any) -> Route:
        return self.mock(return_value=httpx2.Response(status_code, **kwargs))

    @property
    def call_count(self) -> int:
        return len(self.calls)

    @property
    def called(self) -> bool:
        return bool(self.calls)

    def matches(self, request: httpx2.Request) -> bool:
        if request.method != self.method:
            return False
        wanted = httpx2.URL(self.url)
        url = request.url
        same_place = (url.scheme, url.host, url.port, url.path) == (
            wanted.scheme,
            wanted.host,
            wanted.port,
            wanted.path,
        )
        return same_place and (not wanted.query or wanted.query == url.query)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        effect = self._side_effect
        if isinstance(effect, Iterator):
            effect = next(effect)
        if effect is None:
            response = self.return_value if self.return_value is not None else httpx2.Response(200)
        elif isinstance(effect, BaseException) or (
            isinstance(effect, type) and issubclass(effect, BaseException)
        ):
            self.calls.append(Call(request, None))
            raise effect
        elif isinstance(effect, httpx2.Response):
            response = effect
        else:
            response = effect(request)
        self.calls.append(Call(request, response))
        # A fresh copy each time: the same Response object cannot be streamed twice.
        return httpx2.Response(
            response.status_code, headers=response.headers, content=response.content, request=request
        )


class _Router:
    def __init__(self) -> None:
        self.routes: list[Route] = []

    def route(self, method: str, url: str) -> Route:
        found = Route(method.upper(), url)
        self.routes.insert(0, found)  # the latest declaration wins, as in respx
        return found

    def handle(self, request: httpx2.Request) -> httpx2.Response:
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


def mock(test: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test with every real transport answering from the declared routes."""
    if not inspect.iscoroutinefunction(test):
        raise TypeError("http_mock.mock decorates async tests")

    @functools.wraps(test)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        router = _Router()
        transports = (httpx2.AsyncHTTPTransport, Http11Transport)
        originals = [t.handle_async_request for t in transports]

        async def handle(self: httpx2.AsyncBaseTransport, request: httpx2.Request) -> httpx2.Response:
            await request.aread()
            return router.handle(request)

        _active.append(router)
        for transport in transports:
            transport.handle_async_request = handle  # type: ignore[method-assign]
        try:
            return await test(*args, **kwargs)
        finally:
            for transport, original in zip(transports, originals, strict=True):
                transport.handle_async_request = original  # type: ignore[method-assign]
            _active.pop()

    return wrapper
