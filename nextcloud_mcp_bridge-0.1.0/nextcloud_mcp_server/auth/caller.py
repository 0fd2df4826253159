"""Who is calling: the validated bearer token of the current request, as a `Caller`.

Read from the HTTP request that carried the message (not from the context variable set when a
session began), so a client that re-authorizes mid-session with more scopes is seen with its new
token at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

__all__ = ["Caller", "caller_from_scope", "caller_key", "caller_of"]


@dataclass(frozen=True)
class Caller:
    """An authenticated caller. `user_id` is the Nextcloud user the token maps to."""

    subject: str
    user_id: str
    scopes: frozenset[str]
    token: str
    client_id: str = ""
    issuer: str = ""
    expires_at: int | None = None

    @classmethod
    def from_access_token(cls, access: AccessToken) -> Caller:
        claims = access.claims or {}
        return cls(
            subject=access.subject or "",
            user_id=str(claims.get("nextcloud_user_id") or access.subject or ""),
            scopes=frozenset(access.scopes),
            token=access.token,
            client_id=access.client_id,
            issuer=str(claims.get("iss", "")),
            expires_at=access.expires_at,
        )

    def __repr__(self) -> str:  # never the token
        return f"Caller(subject={self.subject!r}, user_id={self.user_id!r}, scopes={sorted(self.scopes)})"


def caller_from_scope(scope: Mapping[str, Any] | None) -> Caller | None:
    """The caller of an ASGI request, if it carried a valid bearer token."""
    user = scope.get("user") if scope is not None else None
    if isinstance(user, AuthenticatedUser):
        return Caller.from_access_token(user.access_token)
    return None


def caller_of(ctx: Any) -> Caller | None:
    """The caller behind an MCP `Context` or a server `ServerRequestContext` (None in
    single-user mode)."""
    try:
        request = ctx.request if hasattr(ctx, "lifespan_context") else ctx.request_context.request
    except (AttributeError, ValueError):
        request = None
    caller = caller_from_scope(getattr(request, "scope", None))
    if caller is not None:
        return caller
    access = get_access_token()
    return Caller.from_access_token(access) if access is not None else None


def caller_key(caller: Caller | None) -> tuple[str, str]:
    """Whose facts a per-user cache holds: the caller's subject at their identity provider, or
    the one user of single-user mode."""
    return (caller.issuer, caller.subject) if caller is not None else ("", "")
