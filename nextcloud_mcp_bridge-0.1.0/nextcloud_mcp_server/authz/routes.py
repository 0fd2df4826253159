"""The authorization server's HTTP routes: the SDK's (/authorize, /token, /register, /revoke and
RFC 8414 metadata) with what the SDK lacks added around them - the metadata advertises client ID
metadata documents, RFC 9207 `iss` and the JWKS; /register and /authorize are rate limited per
client address (`client_address.py`); bounded bodies, `resource` at /token, `iss` on every
redirect back to the client and revocation by public clients (`edges.py`); /.well-known/jwks.json
publishes the signing keys."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp.server.auth.routes import cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from nextcloud_mcp_server.authz.edges import (
    MAX_FORM_BYTES,
    MAX_REGISTRATION_BYTES,
    BoundedBody,
    IssuerOnRedirects,
    check_resource,
    oauth_error,
    public_revocation,
)
from nextcloud_mcp_server.authz.requests import SIGNIN_PATH
from nextcloud_mcp_server.inbound.client_address import client_bucket

if TYPE_CHECKING:
    from nextcloud_mcp_server.authz.service import AuthServer

__all__ = ["CROSS_ORIGIN_PATHS", "JWKS_PATH", "RateLimit", "auth_server_routes"]

JWKS_PATH = "/.well-known/jwks.json"
METADATA_PATH = "/.well-known/oauth-authorization-server"
# Called by browser-based clients from their own origin (the SDK answers CORS there); none of them
# acts on a cookie or other ambient authority, so a foreign Origin may call them.
CROSS_ORIGIN_PATHS = (METADATA_PATH, JWKS_PATH, "/token", "/register", "/revoke")
MAX_ADDRESSES = 10_000
# Each /authorize stores a request until it expires: bound how fast one address can add them.
AUTHORIZE_PER_MINUTE = 60


class RateLimit:
    """At most `per_minute` requests per source address per minute; more get 429 + Retry-After."""

    def __init__(
        self,
        app: ASGIApp,
        per_minute: int,
        *,
        what: str,
        methods: tuple[str, ...] = ("POST",),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.per_minute = per_minute
        self.what = what  # "registrations", "authorization requests": what the refusal names
        self.methods = methods
        self._clock = clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in self.methods:
            await self.app(scope, receive, send)
            return
        address = client_bucket(scope)
        now = self._clock()
        times = self._seen.setdefault(address, deque())
        self._seen.move_to_end(address)
        while times and times[0] <= now - 60:
            times.popleft()
        if len(times) >= self.per_minute:
            wait = max(1, math.ceil(times[0] + 60 - now))
            described = (
                f"too many {self.what} from your address (at most {self.per_minute} a minute); "
                f"try again in {wait} s"
            )
            # CORS here too (oauth_error): browser-based clients must be able to read the answer.
            await oauth_error(429, "too_many_requests", described, {"Retry-After": str(wait)})(
                scope, receive, send
            )
            return
        times.append(now)
        while len(self._seen) > MAX_ADDRESSES:
            self._seen.popitem(last=False)
        await self.app(scope, receive, send)


def auth_server_routes(server: AuthServer, scopes: list[str]) -> list[Route]:
    settings = server.settings
    issuer = AnyHttpUrl(server.issuer)
    registration = ClientRegistrationOptions(
        enabled=settings.auth_server_dcr_enabled, valid_scopes=scopes, default_scopes=scopes
    )
    routes = create_auth_routes(
        _LazyProvider(server),  # type: ignore[arg-type]
        issuer,
        client_registration_options=registration,
        revocation_options=RevocationOptions(enabled=True),
    )
    from mcp.server.auth.routes import build_metadata

    metadata = build_metadata(issuer, None, registration, RevocationOptions(enabled=True))
    metadata.client_id_metadata_document_supported = settings.auth_server_cimd_enabled
    metadata.authorization_response_iss_parameter_supported = True
    metadata.token_endpoint_auth_methods_supported = ["client_secret_post", "client_secret_basic", "none"]
    document = metadata.model_dump(mode="json", exclude_none=True)
    document["jwks_uri"] = f"{settings.public_origin}{JWKS_PATH}"

    def metadata_endpoint(request: Request) -> Response:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    def jwks_endpoint(request: Request) -> Response:
        return JSONResponse(server.keys.jwks(), headers={"Cache-Control": "public, max-age=300"})

    signin = f"{settings.public_origin}{SIGNIN_PATH}?"
    result: list[Route] = []
    for route in routes:
        if route.path == METADATA_PATH:
            route = Route(
                METADATA_PATH,
                cors_middleware(metadata_endpoint, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            )
        elif route.path == "/authorize":
            answer = IssuerOnRedirects(BoundedBody(route.app, MAX_FORM_BYTES), server.issuer, signin)
            limited = RateLimit(
                answer, AUTHORIZE_PER_MINUTE, what="authorization requests", methods=("GET", "POST")
            )
            route = Route("/authorize", limited, methods=["GET", "POST"])
        elif route.path == "/register":
            bounded = BoundedBody(route.app, MAX_REGISTRATION_BYTES, form=False)
            limited = RateLimit(bounded, settings.auth_server_dcr_per_minute, what="registrations")
            route = Route("/register", limited, methods=["POST", "OPTIONS"])
        elif route.path == "/token":
            checked = BoundedBody(route.app, MAX_FORM_BYTES, check=check_resource(settings.audiences))
            route = Route("/token", checked, methods=["POST", "OPTIONS"])
        elif route.path == "/revoke":
            checked = BoundedBody(route.app, MAX_FORM_BYTES, check=public_revocation)
            route = Route("/revoke", checked, methods=["POST", "OPTIONS"])
        result.append(route)
    result.append(
        Route(JWKS_PATH, cors_middleware(jwks_endpoint, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])
    )
    return result


class _LazyProvider:
    """The routes exist before the store is open; the provider only once it is."""

    def __init__(self, server: AuthServer) -> None:
        self._server = server

    def __getattr__(self, name: str) -> object:
        return getattr(self._server.provider, name)
