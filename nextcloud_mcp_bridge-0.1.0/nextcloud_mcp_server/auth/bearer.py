"""The authentication backend in front of every route in OAuth mode: the SDK's bearer backend,
with the client's address handed to the verifier, so that unknown opaque tokens are bounded per
address (`verifier.TooManyRefusals`) and answered 429 instead of costing a request each."""

from __future__ import annotations

import time

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier, TooManyRefusals
from nextcloud_mcp_server.inbound.client_address import client_bucket

__all__ = ["AddressedBearerBackend", "Throttled", "throttled"]


class Throttled(AuthenticationError):
    def __init__(self, refusal: TooManyRefusals) -> None:
        super().__init__(str(refusal))
        self.retry_after = refusal.retry_after


class AddressedBearerBackend(AuthenticationBackend):
    def __init__(self, verifier: BearerTokenVerifier) -> None:
        self.verifier = verifier

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, AuthenticatedUser] | None:
        header = conn.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            return None
        try:
            access = await self.verifier.verify_token(header[7:], address=client_bucket(conn.scope))
        except TooManyRefusals as refusal:
            raise Throttled(refusal) from None
        if access is None or (access.expires_at is not None and access.expires_at < int(time.time())):
            return None
        return AuthCredentials(access.scopes), AuthenticatedUser(access)


def throttled(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    """`AuthenticationMiddleware`'s answer when the backend refused to check a token."""
    retry = exc.retry_after if isinstance(exc, Throttled) else 60
    return JSONResponse(
        {"error": "too_many_requests", "error_description": str(exc)},
        status_code=429,
        headers={"Retry-After": str(retry)},
    )
