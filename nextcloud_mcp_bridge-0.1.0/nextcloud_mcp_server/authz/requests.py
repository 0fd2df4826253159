"""Authorization requests between /authorize and the client's redirect: the contract between the
protocol side (`provider.authorize()` creates one) and the person's side (sign-in and consent
pages, which bind the Nextcloud user and approve or decline).

A request is pending until approved, declined or expired; each of those happens once. Approving
issues the authorization code (subject = the signed-in Nextcloud user) and answers with the
client's redirect URL carrying `code`, `state` and `iss` (RFC 9207).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mcp.server.auth.provider import construct_redirect_uri

from nextcloud_mcp_server.authz.db import digest
from nextcloud_mcp_server.storage.connection import Connection

__all__ = [
    "CONSENT_PATH",
    "SIGNIN_PATH",
    "AuthorizationRequest",
    "AuthorizationRequests",
    "NewRequest",
    "RequestUnusable",
    "StoredAuthorizationRequests",
    "client_redirect",
]

SIGNIN_PATH = "/oauth/signin"  # the sign-in hand-off; provider.authorize() redirects the browser here
CONSENT_PATH = "/oauth/consent"
CODE_TTL_SECONDS = 60.0


@dataclass(frozen=True)
class AuthorizationRequest:
    id: str  # random, 256 bits, URL-safe: the only key the browser carries
    client_id: str
    client_name: str  # display text from DCR / the metadata document / configuration (escape it)
    redirect_uri: str  # already validated against the client's registered URIs
    scopes: tuple[str, ...]  # this server's scope names, validated, never empty
    resource: str  # the RFC 8707 resource, one of settings.audiences
    expires_at: float
    user_id: str | None  # the Nextcloud user, once signed in


@dataclass(frozen=True)
class NewRequest:
    """What /authorize validated; the parts of a request the person never sees included."""

    client_id: str
    client_name: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    scopes: tuple[str, ...]
    resource: str
    code_challenge: str
    state: str | None


def client_redirect(redirect_uri: str, issuer: str, **params: str | None) -> str:
    """The client's redirect URI with the answer's parameters: every answer that goes back to the
    client (code, decline, error) names the issuer (RFC 9207), so a client talking to several
    authorization servers can tell whose answer it got."""
    return construct_redirect_uri(redirect_uri, **params, iss=issuer)


class RequestUnusable(Exception):
    """Unknown, expired, used, or not signed in; str() is a sentence for the person."""


class AuthorizationRequests(Protocol):
    async def get(self, request_id: str) -> AuthorizationRequest | None:
        """None when unknown, expired, or already approved/declined."""

    async def signed_in(self, request_id: str, user_id: str) -> AuthorizationRequest:
        """Binds the Nextcloud user; once only (a second call raises RequestUnusable)."""

    async def approve(self, request_id: str) -> str:
        """Single use; needs a bound user; issues the authorization code (subject = user_id);
        returns the client's redirect URL with code, state and iss (RFC 9207)."""

    async def decline(self, request_id: str) -> str:
        """Single use; returns the client's redirect URL with error=access_denied and state."""


_SELECT = (
    "SELECT id, client_id, client_name, redirect_uri, scopes, resource, expires_at, user_id, status, "
    "redirect_explicit, code_challenge, state FROM authz_requests WHERE id = ?"
)
_INSERT = (
    "INSERT INTO authz_requests (id, client_id, client_name, redirect_uri, scopes, resource, expires_at, "
    "user_id, status, redirect_explicit, code_challenge, state) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 'pending', ?, ?, ?)"
)
_FINISH = "UPDATE authz_requests SET status = ? WHERE id = ? AND status = 'pending' AND expires_at > ?"
_UNKNOWN = "This sign-in request is unknown."
_AGAIN = " Start again from your MCP client."


class StoredAuthorizationRequests:
    """`AuthorizationRequests` on the store's SQLite connection (tables from `authz/db.py`)."""

    def __init__(
        self,
        db: Connection,
        issuer: str,
        *,
        ttl: float = 600.0,
        code_ttl: float = CODE_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.issuer = issuer
        self.ttl = ttl
        self.code_ttl = code_ttl
        self._clock = clock

    async def create(self, new: NewRequest) -> AuthorizationRequest:
        if not new.scopes:
            raise ValueError("an authorization request needs at least one scope")
        request_id = secrets.token_urlsafe(32)
        expires_at = self._clock() + self.ttl
        await self._db.execute(
            _INSERT,
            (request_id, new.client_id, new.client_name, new.redirect_uri, " ".join(new.scopes),
             new.resource, expires_at, int(new.redirect_uri_provided_explicitly), new.code_challenge,
             new.state),
        )  # fmt: skip
        await self._db.commit()
        return AuthorizationRequest(
            request_id, new.client_id, new.client_name, new.redirect_uri, new.scopes, new.resource,
            expires_at, None,
        )  # fmt: skip

    async def _row(self, request_id: str) -> tuple[object, ...] | None:
        async with self._db.execute(_SELECT, (request_id,)) as c:
            row = await c.fetchone()
        return tuple(row) if row is not None else None

    @staticmethod
    def _request(row: tuple[object, ...]) -> AuthorizationRequest:
        user = row[7]
        return AuthorizationRequest(
            str(row[0]), str(row[1]), str(row[2]), str(row[3]), tuple(str(row[4]).split()), str(row[5]),
            float(row[6]), str(user) if user is not None else None,  # type: ignore[arg-type]
        )  # fmt: skip

    async def get(self, request_id: str) -> AuthorizationRequest | None:
        row = await self._row(request_id)
        if row is None or row[8] != "pending" or float(row[6]) <= self._clock():  # type: ignore[arg-type]
            return None
        return self._request(row)

    async def _why(self, request_id: str) -> RequestUnusable:
        row = await self._row(request_id)
        if row is None:
            return RequestUnusable(_UNKNOWN + _AGAIN)
        if row[8] != "pending":
            return RequestUnusable("This sign-in request was already answered." + _AGAIN)
        if float(row[6]) <= self._clock():  # type: ignore[arg-type]
            return RequestUnusable("This sign-in request has expired." + _AGAIN)
        if row[7] is None:
            return RequestUnusable("Sign in at Nextcloud first.")
        return RequestUnusable("Someone already signed in for this request." + _AGAIN)

    async def signed_in(self, request_id: str, user_id: str) -> AuthorizationRequest:
        if not user_id:
            raise ValueError("a user id is required")
        cursor = await self._db.execute(
            "UPDATE authz_requests SET user_id = ? WHERE id = ? AND status = 'pending' "
            "AND user_id IS NULL AND expires_at > ?",
            (user_id, request_id, self._clock()),
        )
        await self._db.commit()
        if cursor.rowcount != 1:
            raise await self._why(request_id)
        row = await self._row(request_id)
        assert row is not None
        return self._request(row)

    async def _finish(self, request_id: str, status: str, *, needs_user: bool) -> tuple[object, ...]:
        query = _FINISH + " AND user_id IS NOT NULL" if needs_user else _FINISH
        cursor = await self._db.execute(query, (status, request_id, self._clock()))
        await self._db.commit()
        if cursor.rowcount != 1:
            raise await self._why(request_id)
        row = await self._row(request_id)
        assert row is not None
        return row

    async def approve(self, request_id: str) -> str:
        row = await self._finish(request_id, "approved", needs_user=True)
        code = secrets.token_urlsafe(32)
        await self._db.execute(
            "INSERT INTO authz_codes (code_hash, client_id, redirect_uri, redirect_explicit, code_challenge, "
            "scopes, resource, subject, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (digest(code), row[1], row[3], row[9], row[10], row[4], row[5], row[7],
             self._clock() + self.code_ttl),
        )  # fmt: skip
        await self._db.commit()
        state = str(row[11]) if row[11] is not None else None
        return client_redirect(str(row[3]), self.issuer, code=code, state=state)

    async def decline(self, request_id: str) -> str:
        row = await self._finish(request_id, "declined", needs_user=False)
        state = str(row[11]) if row[11] is not None else None
        return client_redirect(
            str(row[3]), self.issuer, error="access_denied", error_description="The person declined.",
            state=state,
        )  # fmt: skip

    async def expire(self) -> None:
        """Forget requests, and codes, a day after they expired (a code replayed within that day
        still revokes what its first use produced)."""
        await self._db.execute("DELETE FROM authz_requests WHERE expires_at < ?", (self._clock() - 86400,))
        await self._db.execute("DELETE FROM authz_codes WHERE expires_at < ?", (self._clock() - 86400,))
        await self._db.commit()
