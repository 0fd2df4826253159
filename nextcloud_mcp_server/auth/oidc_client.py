"""This server as an OAuth client of the identity provider (offline access).

It asks for the user's consent (authorization code + PKCE S256, `prompt=consent` so
`offline_access` is honoured), exchanges the code, checks the ID token, refreshes access tokens
for Nextcloud and revokes refresh tokens (RFC 7009). Client authentication is
`client_secret_basic` with OIDC_CLIENT_ID/OIDC_CLIENT_SECRET.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import jwt

from nextcloud_mcp_server.auth.oidc import JWKSCache, OIDCUnavailable, ProviderMetadata
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.numbers import lifetime
from nextcloud_mcp_server.outbound.client import BoundedClient
from nextcloud_mcp_server.outbound.errors import OutboundError

__all__ = ["InvalidGrant", "OIDCClient", "TokenSet", "pkce_pair"]

CALLBACK_PATH = "/oauth/callback-nextcloud"


class InvalidGrant(Exception):
    """The identity provider no longer accepts the refresh token (revoked, expired, reused)."""


class ProviderError(Exception):
    """The identity provider refused a request; `error` is its OAuth error code."""

    def __init__(self, error: str, description: str = "") -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error = error


@dataclass(frozen=True)
class TokenSet:
    access_token: str
    expires_in: float
    refresh_token: str | None
    id_token: str | None
    scope: str

    def __repr__(self) -> str:
        return f"TokenSet(expires_in={self.expires_in}, scope={self.scope!r})"


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge) as RFC 7636 describes."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(48)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class OIDCClient:
    def __init__(
        self, settings: Settings, http: BoundedClient, metadata: ProviderMetadata, jwks: JWKSCache
    ) -> None:
        self.settings = settings
        self._http = http
        self.metadata = metadata
        self.jwks = jwks

    @property
    def redirect_uri(self) -> str:
        return f"{self.settings.public_origin}{CALLBACK_PATH}"

    @property
    def _auth(self) -> tuple[str, str]:
        secret = self.settings.oidc_client_secret
        return self.settings.oidc_client_id or "", secret.get_secret_value() if secret else ""

    async def _endpoint(self, name: str) -> str:
        value = await self.metadata.endpoint(name)
        if not value:
            raise OIDCUnavailable(f"the identity provider publishes no {name}")
        return value

    async def authorization_url(self, *, state: str, challenge: str, nonce: str, login_hint: str) -> str:
        scopes = ["openid", "offline_access", *self.settings.nextcloud_oidc_scopes.split()]
        query = {
            "response_type": "code",
            "client_id": self.settings.oidc_client_id or "",
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(dict.fromkeys(scopes)),
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "prompt": "consent",
            "login_hint": login_hint,
        }
        if self.settings.nextcloud_resource:
            query["resource"] = self.settings.nextcloud_resource
        return f"{await self._endpoint('authorization_endpoint')}?{urlencode(query)}"

    async def _token_request(self, data: dict[str, str]) -> TokenSet:
        if self.settings.nextcloud_resource:
            data = {**data, "resource": self.settings.nextcloud_resource}
        try:
            response = await self._http.post_form(
                await self._endpoint("token_endpoint"), data, basic=self._auth
            )
            answer: Any = response.json()
        except (OutboundError, ValueError, RecursionError) as exc:
            raise OIDCUnavailable(f"the token endpoint failed: {exc}") from None
        if not isinstance(answer, dict):
            raise OIDCUnavailable("the token endpoint answered something other than a JSON object")
        if response.status_code != 200 or "access_token" not in answer:
            error = str(answer.get("error", f"http_{response.status_code}"))
            if error == "invalid_grant":
                raise InvalidGrant(str(answer.get("error_description", "")))
            raise ProviderError(error, str(answer.get("error_description", "")))
        return TokenSet(
            access_token=str(answer["access_token"]),
            expires_in=lifetime(answer.get("expires_in"), 300),
            refresh_token=answer.get("refresh_token"),
            id_token=answer.get("id_token"),
            scope=str(answer.get("scope", "")),
        )

    async def exchange_code(self, code: str, verifier: str) -> TokenSet:
        return await self._token_request(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect_uri,
                "code_verifier": verifier,
            }
        )

    async def refresh(self, refresh_token: str) -> TokenSet:
        return await self._token_request({"grant_type": "refresh_token", "refresh_token": refresh_token})

    async def revoke(self, refresh_token: str) -> bool:
        """RFC 7009 revocation; False when the provider has no revocation endpoint."""
        endpoint = await self.metadata.endpoint("revocation_endpoint")
        if not endpoint:
            return False
        try:
            response = await self._http.post_form(
                endpoint, {"token": refresh_token, "token_type_hint": "refresh_token"}, basic=self._auth
            )
        except OutboundError as exc:
            raise OIDCUnavailable(f"revocation failed: {exc}") from None
        return response.status_code == 200

    async def id_token_claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        """The verified claims of an ID token from this flow (signature, iss, aud, exp, nonce)."""
        try:
            header = jwt.get_unverified_header(id_token)
            algorithm = str(header.get("alg", ""))
            if algorithm not in self.settings.algorithms:
                raise ProviderError("invalid_id_token", f"algorithm {algorithm!r} is not allowed")
            key = await self.jwks.key_for(header.get("kid"), algorithm)
            if key is None:
                raise ProviderError("invalid_id_token", "unknown signing key")
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.settings.oidc_client_id,
                issuer=self.settings.oidc_issuer,
                leeway=self.settings.oidc_leeway_seconds,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise ProviderError("invalid_id_token", str(exc)) from None
        if not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
            raise ProviderError("invalid_id_token", "the nonce does not match this sign-in")
        if claims.get("exp", 0) < time.time() - self.settings.oidc_leeway_seconds:
            raise ProviderError("invalid_id_token", "expired")
        return claims
