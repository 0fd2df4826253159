"""The SDK's `OAuthAuthorizationServerProvider` for this server: the SDK's handlers do the
protocol (/authorize, /token with PKCE S256, /register, /revoke); this class answers their
questions from `Clients`, the authorization requests, and `Tokens`.

Codes are single use: loading one marks it used, before PKCE and redirect URI are checked, so a
code guessed or stolen gets one attempt. A code presented again revokes everything issued from
it (its refresh token family and that family's access tokens).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from nextcloud_mcp_server.auth.scopes import normalize
from nextcloud_mcp_server.authz.clients import Clients
from nextcloud_mcp_server.authz.db import digest
from nextcloud_mcp_server.authz.requests import SIGNIN_PATH, NewRequest, StoredAuthorizationRequests
from nextcloud_mcp_server.authz.tokens import Tokens
from nextcloud_mcp_server.inbound.client_policy import name_problem, redirect_uri_problem
from nextcloud_mcp_server.storage.connection import Connection

__all__ = ["Provider"]

REPLAYED = "!replayed"
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
MAX_STATE = 1024
MAX_REDIRECT_URIS = 20
MAX_CLIENT_BYTES = 8 * 1024  # what is stored; the request itself is bounded too (edges.py)


class Provider:
    """OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]."""

    def __init__(
        self,
        db: Connection,
        *,
        clients: Clients,
        requests: StoredAuthorizationRequests,
        tokens: Tokens,
        public_origin: str,
        audiences: list[str],
        scopes: list[str],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.clients = clients
        self.requests = requests
        self.tokens = tokens
        self.public_origin = public_origin
        self.audiences = audiences
        self.scopes = scopes
        self._clock = clock

    # --- clients

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return await self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # Open registration: bound what one registration may store.
        if len(client_info.redirect_uris or []) > MAX_REDIRECT_URIS:
            raise RegistrationError("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect URIs")
        for uri in client_info.redirect_uris or []:
            problem = redirect_uri_problem(str(uri))
            if problem is not None:
                raise RegistrationError("invalid_redirect_uri", f"{problem}: {str(uri)[:200]!r}")
        problem = name_problem(client_info.client_name)
        if problem is not None:
            raise RegistrationError("invalid_client_metadata", problem)
        if len(client_info.model_dump_json(exclude_none=True)) > MAX_CLIENT_BYTES:
            raise RegistrationError(
                "invalid_client_metadata", f"client metadata over {MAX_CLIENT_BYTES} bytes"
            )
        await self.clients.register(client_info)

    # --- authorization

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        # The SDK takes any string, even an empty one; an S256 challenge is 43 base64url characters.
        if not S256_CHALLENGE.fullmatch(params.code_challenge):
            raise AuthorizeError("invalid_request", "code_challenge must be an S256 PKCE challenge")
        if params.state is not None and len(params.state) > MAX_STATE:
            raise AuthorizeError("invalid_request", f"state is longer than {MAX_STATE} characters")
        resource = params.resource or self.audiences[0]
        if resource not in self.audiences:
            raise AuthorizeError("invalid_target", "this server issues tokens only for its own MCP endpoint")
        asked = params.scopes if params.scopes else (client.scope or "").split()
        wanted = normalize(asked)  # notes.read and notes:read are the same scope
        scopes = tuple(s for s in self.scopes if normalize([s]) <= wanted)
        if not scopes:
            raise AuthorizeError("invalid_scope", "none of the requested scopes is known here")
        request = await self.requests.create(
            NewRequest(
                client_id=client.client_id,
                client_name=(client.client_name or client.client_id)[:200],
                redirect_uri=str(params.redirect_uri),
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                scopes=scopes,
                resource=resource,
                code_challenge=params.code_challenge,
                state=params.state,
            )
        )
        return f"{self.public_origin}{SIGNIN_PATH}?request={request.id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code_hash = digest(authorization_code)
        cursor = await self._db.execute(
            "UPDATE authz_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL",
            (self._clock(), code_hash),
        )
        await self._db.commit()
        query = (
            "SELECT client_id, redirect_uri, redirect_explicit, code_challenge, scopes, resource, subject, "
            "expires_at, family FROM authz_codes WHERE code_hash = ?"
        )
        async with self._db.execute(query, (code_hash,)) as found:
            row = await found.fetchone()
        if row is None:
            return None
        if cursor.rowcount != 1:  # replayed: revoke what the first use got (or is getting)
            if row[8] and row[8] != REPLAYED:
                await self.tokens.revoke_family(str(row[8]))
            else:
                await self._db.execute(
                    "UPDATE authz_codes SET family = ? WHERE code_hash = ?", (REPLAYED, code_hash)
                )
                await self._db.commit()
            return None
        if row[0] != client.client_id:
            return None
        return AuthorizationCode(
            code=authorization_code, client_id=row[0], redirect_uri=row[1],
            redirect_uri_provided_explicitly=bool(row[2]), code_challenge=row[3], scopes=str(row[4]).split(),
            resource=row[5], subject=row[6], expires_at=row[7],
        )  # fmt: skip

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        token, family = await self.tokens.issue(
            client.client_id,
            authorization_code.subject or "",
            authorization_code.scopes,
            authorization_code.resource or self.audiences[0],
        )
        cursor = await self._db.execute(
            "UPDATE authz_codes SET family = ? WHERE code_hash = ? AND family IS NULL",
            (family, digest(authorization_code.code)),
        )
        await self._db.commit()
        if cursor.rowcount != 1:  # replayed while we were issuing
            await self.tokens.revoke_family(family)
            raise TokenError("invalid_grant", "the authorization code was used twice")
        await self.clients.used(client.client_id)
        return token

    # --- refresh and access tokens

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        loaded = await self.tokens.load_refresh(refresh_token)
        return loaded[0] if loaded is not None else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        token = await self.tokens.rotate(refresh_token, scopes)
        if token is None:
            raise TokenError("invalid_grant", "the refresh token was already used")
        return token

    async def load_access_token(self, token: str) -> AccessToken | None:
        claims = await self.tokens.decode(token)
        if claims is None:
            return None
        return _access(token, claims)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, AccessToken):
            await self.tokens.revoke_access(token.claims or {})
            return
        loaded = await self.tokens.load_refresh(token.token)
        if loaded is not None:
            await self.tokens.revoke_family(loaded[1])


def _access(token: str, claims: dict[str, Any]) -> AccessToken:
    return AccessToken(
        token=token,
        client_id=str(claims.get("client_id", "")),
        scopes=str(claims.get("scope", "")).split(),
        expires_at=int(claims["exp"]),
        resource=str(claims.get("aud")),
        subject=str(claims["sub"]),
        claims=claims,
    )
