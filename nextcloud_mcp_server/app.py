"""`create_app(settings)`: the Starlette app for the streamable HTTP transport.

Routes: `/mcp` (MCP, stateful sessions) and `/health`. The lifespan owns the runtime (HTTP pool)
and the MCP session manager.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_server

__all__ = ["create_app", "is_loopback", "transport_security"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """True when a bind address only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _has_port(host: str) -> bool:
    return "]:" in host if host.startswith("[") else ":" in host


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection: only the Host/Origin values this server is reached by."""
    hosts: list[str] = []
    for name in (*LOOPBACK_NAMES, *settings.allowed_hosts):
        hosts += [name] if _has_port(name) else [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "version": __version__})


def create_app(settings: Settings, *, runtime: Runtime | None = None) -> Starlette:
    runtime = runtime or Runtime(settings)
    mcp = build_server(settings, runtime)
    # Creates the session manager; its own Starlette app is not used.
    mcp.streamable_http_app(transport_security=transport_security(settings), host=settings.mcp_host)
    manager = mcp.session_manager

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with runtime, manager.run():
            yield

    routes = [
        Route("/mcp", endpoint=StreamableHTTPASGIApp(manager)),
        Route("/health", endpoint=_health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
