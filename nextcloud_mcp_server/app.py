"""`create_app(settings)`: the Starlette app for the streamable HTTP transport.

Routes: `/mcp` (MCP, stateful sessions), `/health` and `/health/ready`, and in OAuth mode the
protected resource metadata (RFC 9728). Every route is behind the Host/Origin guard. The lifespan
owns the runtime (HTTP pools, verifier) and the MCP session manager.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from nextcloud_mcp_server.auth.bearer import AddressedBearerBackend, throttled
from nextcloud_mcp_server.auth.resource_server import (
    RequireBearer,
    StepUpGate,
    metadata_url,
    protected_resource_metadata,
)
from nextcloud_mcp_server.auth.scopes import advertised
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.inbound.client_address import ClientAddress
from nextcloud_mcp_server.resources import resource_scopes
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_listed, build_server
from nextcloud_mcp_server.tools import offered_tools, tool_scopes
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL
from nextcloud_mcp_server.web.call_limits import ByProtocolEra, StatelessCallLimiter
from nextcloud_mcp_server.web.front import BodyLimit
from nextcloud_mcp_server.web.health import health_routes
from nextcloud_mcp_server.web.http_guard import HostOriginGuard, NulQueryGuard
from nextcloud_mcp_server.web.plain_answers import PlainAnswers, PlainAnswerSessions
from nextcloud_mcp_server.web.sessions import SessionLimiter
from nextcloud_mcp_server.web.store_outage import StoreOutage

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


def create_app(settings: Settings, *, runtime: Runtime | None = None) -> Starlette:
    runtime = runtime or Runtime(settings, scopes=tool_scopes(settings))
    mcp = build_server(settings, runtime)
    build_listed(mcp)  # a long-lived server: every listed tool built before the first call (ADR 0093)
    security = transport_security(settings)
    # Makes the SDK's session manager, whose low-level server ours is built around; its own
    # Starlette app is not used.
    mcp.streamable_http_app(transport_security=security, host=settings.mcp_host)
    # The same manager (stateful, SSE by default), answering some requests in plain JSON.
    manager = PlainAnswerSessions(
        app=mcp.session_manager.app,
        security_settings=security,
        max_request_body_size=settings.mcp_max_request_bytes,
        session_idle_timeout=settings.mcp_session_idle_timeout_seconds,
        max_sessions=settings.mcp_max_sessions,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with runtime, manager.run():
            yield

    # a read-only tool that may ask the person (a form) keeps the stream
    read_only = [t.name for t in offered_tools(settings) if t.read_only and not t.asks]
    served = PlainAnswers(StreamableHTTPASGIApp(manager), read_only)
    # limits that fit each protocol era: sessions, or calls of the stateless one (ADR 0054)
    endpoint: ASGIApp = ByProtocolEra(
        sessions=SessionLimiter(
            served,
            manager,
            per_user=settings.mcp_max_sessions_per_user,
            total=settings.mcp_max_sessions,
            opens_per_minute=settings.mcp_session_opens_per_minute,
        ),
        stateless=StatelessCallLimiter(
            served,
            per_minute=settings.mcp_stateless_calls_per_minute,
            in_flight=settings.mcp_stateless_calls_in_flight_per_user,
        ),
    )
    routes = health_routes(runtime)
    cross_origin: tuple[str, ...] = ()
    if settings.auth_server_enabled:
        from nextcloud_mcp_server.authz.routes import CROSS_ORIGIN_PATHS

        cross_origin = CROSS_ORIGIN_PATHS
    middleware = [
        Middleware(StoreOutage),  # a store that cannot be reached: 503 with Retry-After (ADR 0056)
        Middleware(ClientAddress, trusted=settings.trusted_proxies),  # before anything counts by address
        Middleware(
            HostOriginGuard,
            allowed_hosts=security.allowed_hosts,
            allowed_origins=security.allowed_origins,
            any_origin_paths=cross_origin,
        ),
        Middleware(NulQueryGuard),  # a NUL in a query: 400 (PostgreSQL cannot compare it)
    ]
    if settings.oauth_enabled:
        resource = settings.mcp_public_url or ""
        meta_url = metadata_url(resource)
        tools = offered_tools(settings)
        scopes = advertised({s for t in tools for s in t.scopes}, settings.oauth_scope_style)
        document = protected_resource_metadata(resource, settings.token_issuer or "", scopes)

        async def metadata(request: Request) -> JSONResponse:
            return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

        well_known = "/.well-known/oauth-protected-resource"
        meta_path = meta_url.split("://", 1)[1].partition("/")[2]
        routes += [
            Route(well_known, metadata, methods=["GET"]),
            Route(f"/{meta_path}", metadata, methods=["GET"]),
        ]
        scopes_by_tool = {t.name: t.scopes for t in tools}
        endpoint = RequireBearer(
            StepUpGate(
                endpoint,
                scopes_by_tool,
                meta_url,
                settings.oauth_scope_style,
                resource_scopes,
                call_through=CALL_TOOL,
            ),
            meta_url,
            scopes,
        )
        middleware += [
            Middleware(
                AuthenticationMiddleware, backend=AddressedBearerBackend(runtime.verifier), on_error=throttled
            ),
            Middleware(AuthContextMiddleware),
        ]
        if settings.enable_offline_access:
            from nextcloud_mcp_server.auth.consent import consent_routes
            from nextcloud_mcp_server.authz.signin import finish_signin

            routes += consent_routes(runtime, finish_signin if runtime.auth_server is not None else None)
        if runtime.auth_server is not None:
            from nextcloud_mcp_server.authz.routes import auth_server_routes
            from nextcloud_mcp_server.authz.signin import signin_routes

            routes += auth_server_routes(runtime.auth_server, scopes)
            routes += signin_routes(runtime)  # the person's side: sign-in at Nextcloud, consent
    if settings.replica_id:
        from nextcloud_mcp_server.web.replica_sessions import ReplicaSessionIds

        endpoint = ReplicaSessionIds(endpoint, settings.replica_id)
    routes.insert(0, Route("/mcp", endpoint=BodyLimit(endpoint, settings.mcp_max_request_bytes)))
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
