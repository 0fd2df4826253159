"""DNS-rebinding protection for every HTTP route: only configured Host and Origin values; and no
NUL character in a query string.

A browser tricked into talking to this server under another name sends that name as `Host`;
a page on another site sends its own `Origin`. Both are refused before any route runs.

No parameter of this server holds a NUL character, and PostgreSQL cannot compare text that
does: `?request=a%00b` made every lookup by id raise from the store (a 500) where SQLite found
nothing. `NulQueryGuard` answers such a query 400 before any route runs; forms are checked
where they are read (`authz/edges.py`, `authz/signin.py`).
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostOriginGuard", "NulQueryGuard"]


def _matches(value: str, patterns: list[str]) -> bool:
    value = value.lower()
    return any(value == p or (p.endswith(":*") and value.startswith(p[:-1])) for p in patterns)


class HostOriginGuard:
    def __init__(
        self,
        app: ASGIApp,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        any_origin_paths: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        # endpoints meant for other origins' scripts (OAuth metadata, token, registration), which
        # act on no cookie or other ambient authority
        self.any_origin_paths = any_origin_paths
        self.allowed_hosts = [h.lower() for h in allowed_hosts]
        self.allowed_origins = [o.lower() for o in allowed_origins]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = Headers(scope=scope)
            host, origin = headers.get("host", ""), headers.get("origin")
            if not _matches(host, self.allowed_hosts):
                message = f"Host {host!r} is not one this server answers to (see MCP_ALLOWED_HOSTS)"
                await PlainTextResponse(message, status_code=421)(scope, receive, send)
                return
            cross_origin_ok = scope.get("path", "") in self.any_origin_paths
            if origin is not None and not cross_origin_ok and not _matches(origin, self.allowed_origins):
                message = f"Origin {origin!r} is not allowed (see MCP_ALLOWED_HOSTS)"
                await PlainTextResponse(message, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class NulQueryGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and b"%00" in scope.get("query_string", b""):
            message = "a query parameter holds a NUL character (%00); no parameter of this server takes one"
            await PlainTextResponse(message, status_code=400)(scope, receive, send)
            return
        await self.app(scope, receive, send)
