"""Tokens this server issues: access tokens (JWT, own key, `aud` = the resource) and refresh
tokens (opaque, stored as digests, rotated on every use, in families).

A family is everything issued from one authorization code. Presenting a refresh token that was
already rotated (a stolen copy, or the victim's after the thief used it) revokes its whole family,
the access tokens included (RFC 9700 §4.14.2): they carry the family id (`fam`) and the verifier
asks `is_revoked()`. So does replaying an authorization code.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import jwt
from mcp.server.auth.provider import RefreshToken
from mcp.shared.auth import OAuthToken

from nextcloud_mcp_server.authz.db import digest
from nextcloud_mcp_server.authz.keys import LEEWAY_SECONDS, SigningKeys
from nextcloud_mcp_server.storage.connection import Connection

__all__ = ["Tokens"]

_REVOKE = (
    "INSERT INTO authz_revoked (what, until) VALUES (?, ?) "
    "ON CONFLICT (what) DO UPDATE SET until = excluded.until"
)


class Tokens:
    def __init__(
        self,
        db: Connection,
        keys: SigningKeys,
        *,
        issuer: str,
        audiences: list[str],
        access_seconds: float,
        refresh_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.keys = keys
        self.issuer = issuer
        self.audiences = audiences
        self.access_seconds = access_seconds
        self.refresh_seconds = refresh_seconds
        self._clock = clock

    def _access_token(
        self, client_id: str, subject: str, scopes: list[str], resource: str, family: str
    ) -> str:
        now = int(self._clock())
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": resource,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "nbf": now,
            "exp": now + int(self.access_seconds),
            "jti": secrets.token_urlsafe(16),
            "fam": family,
        }
        return self.keys.sign(claims)

    async def issue(
        self, client_id: str, subject: str, scopes: list[str], resource: str, family: str | None = None
    ) -> tuple[OAuthToken, str]:
        """An access token and a refresh token (in `family`, or a new one); returns the family."""
        family = family or secrets.token_urlsafe(16)
        refresh = secrets.token_urlsafe(32)
        await self._db.execute(
            "INSERT INTO authz_refresh (token_hash, family, client_id, scopes, resource, subject, "
            "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (digest(refresh), family, client_id, " ".join(scopes), resource, subject,
             self._clock() + self.refresh_seconds),
        )  # fmt: skip
        await self._db.commit()
        token = OAuthToken(
            access_token=self._access_token(client_id, subject, scopes, resource, family),
            token_type="Bearer",  # noqa: S106 - the token type, not a secret
            expires_in=int(self.access_seconds),
            scope=" ".join(scopes),
            refresh_token=refresh,
        )
        return token, family

    async def load_refresh(self, token: str) -> tuple[RefreshToken, str] | None:
        """The refresh token and its family, if usable. A rotated one revokes its family."""
        query = (
            "SELECT family, client_id, scopes, resource, subject, expires_at, rotated_at FROM authz_refresh "
            "WHERE token_hash = ?"
        )
        async with self._db.execute(query, (digest(token),)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        family, client_id, scopes, resource, subject, expires_at, rotated_at = row
        if rotated_at is not None:
            await self.revoke_family(family)
            return None
        if expires_at <= self._clock() or await self._revoked(f"family:{family}"):
            return None
        refresh = RefreshToken(
            token=token, client_id=client_id, scopes=scopes.split(), expires_at=int(expires_at),
            resource=resource, subject=subject,
        )  # fmt: skip
        return refresh, family

    async def rotate(self, refresh: RefreshToken, scopes: list[str]) -> OAuthToken | None:
        """Use a refresh token once: a new pair in the same family; None if it was used meanwhile
        (then the family is revoked)."""
        loaded = await self.load_refresh(refresh.token)
        if loaded is None:
            return None
        _, family = loaded
        cursor = await self._db.execute(
            "UPDATE authz_refresh SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL",
            (self._clock(), digest(refresh.token)),
        )
        await self._db.commit()
        if cursor.rowcount != 1:
            await self.revoke_family(family)
            return None
        token, _ = await self.issue(
            refresh.client_id, refresh.subject or "", scopes, refresh.resource or "", family
        )
        return token

    async def revoke_family(self, family: str) -> None:
        until = self._clock() + self.refresh_seconds + LEEWAY_SECONDS
        await self._db.execute(_REVOKE, (f"family:{family}", until))
        await self._db.execute("DELETE FROM authz_refresh WHERE family = ?", (family,))
        await self._db.commit()

    async def revoke_access(self, claims: dict[str, Any]) -> None:
        """Revoke one access token and its family."""
        until = float(claims.get("exp", self._clock())) + LEEWAY_SECONDS
        await self._db.execute(
            _REVOKE,
            (f"jti:{claims.get('jti')}", until),
        )
        await self._db.commit()
        if claims.get("fam"):
            await self.revoke_family(str(claims["fam"]))

    async def _revoked(self, what: str) -> bool:
        async with self._db.execute("SELECT 1 FROM authz_revoked WHERE what = ?", (what,)) as cursor:
            return await cursor.fetchone() is not None

    async def is_revoked(self, claims: dict[str, Any]) -> bool:
        return await self._revoked(f"jti:{claims.get('jti')}") or await self._revoked(
            f"family:{claims.get('fam')}"
        )

    async def decode(self, token: str) -> dict[str, Any] | None:
        """The claims of an unexpired, unrevoked access token of ours, else None."""
        try:
            header = jwt.get_unverified_header(token)
            key = await self.keys.key_for(header.get("kid"), str(header.get("alg", "")))
            if key is None:
                return None
            claims: dict[str, Any] = jwt.decode(
                token, key.key, algorithms=[key.algorithm_name], issuer=self.issuer, audience=self.audiences,
                options={"require": ["exp", "iss", "sub", "aud", "jti"]},
            )  # fmt: skip
        except jwt.PyJWTError:
            return None
        return None if await self.is_revoked(claims) else claims

    async def tidy(self) -> None:
        now = self._clock()
        await self._db.execute("DELETE FROM authz_revoked WHERE until < ?", (now,))
        await self._db.execute("DELETE FROM authz_refresh WHERE expires_at < ?", (now,))
        await self._db.commit()
