"""Bearer token verification for this resource server (the SDK's `TokenVerifier`).

Four steps, each refusing on its own (the reason is logged, never the token):
1. parse: a JWT (three segments) or an opaque token;
2. authenticate: JWT signature with a key from the issuer's JWKS and an allow-listed asymmetric
   algorithm (never `none`, never HMAC); opaque tokens by RFC 7662 introspection, or, for
   Nextcloud's own oauth2 app, by asking Nextcloud who the token belongs to;
3. validate claims: issuer, expiry, not-before, issued-at, and **our own audience only**;
4. map the caller to a Nextcloud user (a configurable claim).
Scopes are checked per tool elsewhere (`auth/scopes.py`, `auth/resource_server.py`).

An opaque token costs a request to the issuer or to Nextcloud (through the pool real users share),
so unknown ones are bounded per client address: at most OIDC_OPAQUE_REFUSALS_PER_MINUTE refused
in a minute, then `TooManyRefusals` (429) without asking anyone. A refused token's SHA-256 digest
is remembered for a short while, apart from the accepted ones so a flood cannot push those out;
the token itself is never kept.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import jwt
from mcp.server.auth.provider import AccessToken

from nextcloud_mcp_server.auth.oidc import JWKSCache, OIDCUnavailable, ProviderMetadata
from nextcloud_mcp_server.auth.scopes import ALL_SCOPES, normalize
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.numbers import json_number
from nextcloud_mcp_server.outbound.client import BoundedClient
from nextcloud_mcp_server.outbound.errors import OutboundError

__all__ = ["BearerTokenVerifier", "TokenRejected", "TooManyRefusals"]

logger = logging.getLogger(__name__)

MAX_CACHED = 10_000
NEXTCLOUD_CACHE_SECONDS = 60.0
NEGATIVE_CACHE_SECONDS = 15.0

NextcloudWhoAmI = Callable[[str], Awaitable[str | None]]


class OwnIssuer(Protocol):
    """This server as the issuer (AUTH_SERVER_ENABLED): its keys, and what it revoked."""

    async def key_for(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None: ...
    async def is_revoked(self, claims: dict[str, Any]) -> bool: ...


class TokenRejected(Exception):
    """Why a token was refused (for the log; the client only sees 401 invalid_token)."""


class TooManyRefusals(Exception):
    """This address presented more unknown opaque tokens than OIDC_OPAQUE_REFUSALS_PER_MINUTE;
    `retry_after` seconds until the next one is checked."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many unknown bearer tokens from this address; try again in {retry_after} s")
        self.retry_after = retry_after


def _time_claim(claims: dict[str, Any], name: str) -> float | None:
    """A token's `exp` or `nbf` in seconds; None when absent. A value that is no finite number
    refuses the token (NaN passed every comparison of a time, then made `int()` raise)."""
    value = claims.get(name)
    if value is None:
        return None
    seconds = json_number(value)
    if seconds is None:
        raise TokenRejected(f"the token's {name} is not a time")
    return seconds


def _strings(value: Any) -> list[str]:
    """A claim that is a string or a list of strings (`aud`, `scp`); anything else names nothing
    (`"aud": 5` raised TypeError from `list()`, a 500 on every request)."""
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class _TTLCache:
    """Token digest -> verified access (or None for a refused token), with expiry; LRU-bounded."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._items: OrderedDict[str, tuple[float, AccessToken | None]] = OrderedDict()
        self._clock = clock

    def get(self, key: str) -> tuple[bool, AccessToken | None]:
        item = self._items.get(key)
        if item is None or item[0] <= self._clock():
            self._items.pop(key, None)
            return False, None
        self._items.move_to_end(key)
        return True, item[1]

    def put(self, key: str, value: AccessToken | None, seconds: float) -> None:
        self._items[key] = (self._clock() + max(0.0, seconds), value)
        self._items.move_to_end(key)
        while len(self._items) > MAX_CACHED:
            self._items.popitem(last=False)


class _RefusalBudget:
    """Per address: the checks of unknown opaque tokens in the last minute that were not accepted.
    A check counts from its start (a burst cannot outrun the count) and is given back if the token
    turns out valid."""

    def __init__(self, per_minute: int, clock: Callable[[], float]) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, address: str) -> None:
        now = self._clock()
        times = self._seen.setdefault(address, deque())
        self._seen.move_to_end(address)
        while times and times[0] <= now - 60:
            times.popleft()
        if len(times) >= self.per_minute:
            raise TooManyRefusals(max(1, math.ceil(times[0] + 60 - now)))
        times.append(now)
        while len(self._seen) > MAX_CACHED:
            self._seen.popitem(last=False)

    def give_back(self, address: str) -> None:
        times = self._seen.get(address)
        if times:
            times.pop()


class BearerTokenVerifier:
    """Verifies access tokens presented to this MCP server."""

    def __init__(
        self,
        settings: Settings,
        http: BoundedClient,
        *,
        nextcloud_whoami: NextcloudWhoAmI | None = None,
        own: OwnIssuer | None = None,
        jwks_refetch_interval: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if settings.token_issuer is None:
            raise ValueError("BearerTokenVerifier needs OIDC_ISSUER or AUTH_SERVER_ENABLED")
        self.settings = settings
        self.issuer = settings.token_issuer
        self._http = http
        self._clock = clock
        self._own = own
        self.metadata = ProviderMetadata(self.issuer, http)
        self.jwks = JWKSCache(self._jwks_uri, http, refetch_interval=jwks_refetch_interval, clock=clock)
        self._whoami = nextcloud_whoami
        self._cache = _TTLCache(clock)
        self._refused = _TTLCache(clock)  # refusals apart: a flood of them evicts no accepted token
        self._budget = _RefusalBudget(settings.oidc_opaque_refusals_per_minute, clock)

    async def _jwks_uri(self) -> str:
        uri = self.settings.oidc_jwks_uri or await self.metadata.endpoint("jwks_uri")
        if not uri:
            raise OIDCUnavailable("the identity provider publishes no jwks_uri; set OIDC_JWKS_URI")
        return uri

    async def verify_token(self, token: str, address: str | None = None) -> AccessToken | None:
        """The token's access, or None. With the client's `address`, unknown opaque tokens are
        bounded per address (raises `TooManyRefusals`)."""
        try:
            if not token.isascii() or not token.isprintable() or " " in token:
                # no IdP writes such a token; `ab\xe9` raised from the Nextcloud check (a 500)
                raise TokenRejected("the token holds characters outside visible ASCII")
            if token.count(".") == 2:
                return await self._verify_jwt(token)
            return await self._verify_opaque(token, address)
        except TokenRejected as exc:
            logger.info("bearer token refused: %s", exc)
        except OIDCUnavailable as exc:
            logger.warning("cannot verify bearer tokens now: %s", exc)
        return None

    # --- JWT access tokens

    async def _verify_jwt(self, token: str) -> AccessToken:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRejected("not a well-formed JWT") from None
        algorithm = str(header.get("alg", ""))
        if algorithm not in self.settings.algorithms:
            raise TokenRejected(f"algorithm {algorithm!r} is not allowed")
        keys = self._own if self._own is not None else self.jwks  # own keys: no HTTP round trip
        key = await keys.key_for(header.get("kid"), algorithm)
        if key is None:
            raise TokenRejected(f"no signing key {header.get('kid')!r} for {algorithm} at the issuer")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                issuer=self.issuer,
                leeway=self.settings.oidc_leeway_seconds,
                options={"require": ["exp", "iss", "sub"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            raise TokenRejected(f"JWT rejected: {exc}") from None
        if self._own is not None and await self._own.is_revoked(claims):
            raise TokenRejected("the token was revoked")
        resource = self._own_audience(claims.get("aud"))
        scopes = claims.get("scope", "")
        scope_list = scopes.split() if isinstance(scopes, str) else _strings(claims.get("scp"))
        return self._access(token, claims, scope_list, resource)

    def _own_audience(self, aud: Any) -> str:
        audiences = _strings(aud)
        # RFC 7519 §4.1.3: "Each principal intended to process the JWT MUST identify itself with a
        # value in the audience claim. If the principal processing the claim does not identify
        # itself with a value in the "aud" claim when this claim is present, then the JWT MUST be
        # rejected." We are such a principal: one of our own resource identifiers must be in
        # `aud`. Other audiences in the same token are allowed and ignored; in particular we never
        # check for Nextcloud's audience - Nextcloud validates its own.
        for own in self.settings.audiences:
            if own in audiences:
                return own
        raise TokenRejected("the token's audience does not include this server")

    def _access(self, token: str, claims: dict[str, Any], scopes: list[str], resource: str) -> AccessToken:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:  # a list or an object was str()-ed before
            raise TokenRejected("the token names no subject (sub)")
        user = claims.get(self.settings.oidc_user_claim) or subject
        if not isinstance(user, str):
            raise TokenRejected(f"the token's {self.settings.oidc_user_claim} is not a user name")
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or ""),
            scopes=sorted(normalize(scopes)),
            expires_at=None if (expires := _time_claim(claims, "exp")) is None else int(expires),
            resource=resource,
            subject=subject,
            claims={**claims, "nextcloud_user_id": str(user)},
        )

    # --- opaque tokens

    async def _verify_opaque(self, token: str, address: str | None) -> AccessToken:
        mode = self.settings.oidc_opaque_tokens
        if self._own is not None:
            raise TokenRejected("opaque tokens are not accepted: this server issues JWTs")
        if mode == "reject":
            raise TokenRejected("opaque tokens are not accepted (OIDC_OPAQUE_TOKENS=reject)")
        key = f"{mode}:{_digest(token)}"
        hit, cached = self._cache.get(key)
        if hit and cached is not None:
            return cached
        if self._refused.get(key)[0]:
            raise TokenRejected("token refused recently (cached)")
        if address is not None:
            self._budget.take(address)
        try:
            access = await (
                self._introspect(token) if mode == "introspection" else self._ask_nextcloud(token)
            )
        except TokenRejected:
            self._refused.put(key, None, NEGATIVE_CACHE_SECONDS)
            raise
        except BaseException:
            if address is not None:
                self._budget.give_back(address)  # the issuer's trouble, not the caller's token
            raise
        if address is not None:
            self._budget.give_back(address)
        # A token revoked at the issuer stays accepted for at most this long.
        ceiling = (
            self.settings.oidc_introspection_cache_seconds
            if mode == "introspection"
            else NEXTCLOUD_CACHE_SECONDS
        )
        until_expiry = (access.expires_at - self._clock()) if access.expires_at else ceiling
        self._cache.put(key, access, min(ceiling, until_expiry))
        return access

    async def _introspect(self, token: str) -> AccessToken:
        endpoint = self.settings.oidc_introspection_endpoint or await self.metadata.endpoint(
            "introspection_endpoint"
        )
        client_id, secret = self.settings.oidc_client_id, self.settings.oidc_client_secret
        if not endpoint or not client_id or not secret:
            raise TokenRejected("opaque token, but no introspection endpoint or OIDC_CLIENT_ID/SECRET")
        try:
            response = await self._http.post_form(
                endpoint,
                {"token": token, "token_type_hint": "access_token"},
                basic=(client_id, secret.get_secret_value()),
            )
            answer = response.json() if response.status_code == 200 else {}
        except (OutboundError, ValueError, RecursionError) as exc:
            raise OIDCUnavailable(f"introspection failed: {exc}") from None
        if not isinstance(answer, dict) or answer.get("active") is not True:
            raise TokenRejected("introspection says the token is not active")
        if answer.get("iss") not in (None, self.issuer):
            raise TokenRejected("introspection names another issuer")
        now = self._clock()
        leeway = self.settings.oidc_leeway_seconds
        expires, starts = _time_claim(answer, "exp"), _time_claim(answer, "nbf")
        if expires is not None and expires < now - leeway:
            raise TokenRejected("the token has expired")
        if starts is not None and starts > now + leeway:
            raise TokenRejected("the token is not valid yet")
        resource = self._own_audience(answer.get("aud"))
        scopes = str(answer.get("scope", "")).split()
        return self._access(token, {"iss": self.issuer, **answer}, scopes, resource)

    async def _ask_nextcloud(self, token: str) -> AccessToken:
        """Nextcloud's oauth2 app issues opaque tokens and offers no introspection: whoever
        Nextcloud says the token belongs to is the caller. Its tokens carry no scopes, so they
        grant every scope of this server (they already grant the whole account in Nextcloud)."""
        if self._whoami is None:
            raise TokenRejected("no Nextcloud to validate the token with")
        user = await self._whoami(token)
        if user is None:
            raise TokenRejected("Nextcloud does not accept the token")
        claims = {"iss": self.settings.nextcloud_host, "sub": user, self.settings.oidc_user_claim: user}
        own = self.settings.audiences[0] if self.settings.audiences else ""
        access = self._access(token, claims, list(ALL_SCOPES), own)
        return access.model_copy(update={"expires_at": int(self._clock() + NEXTCLOUD_CACHE_SECONDS)})
