"""The identity provider as seen from here: its metadata (OIDC discovery / RFC 8414) and keys.

Both are fetched on first use and cached. An unknown `kid` in a token triggers at most one JWKS
refetch per `refetch_interval`, so a flood of forged tokens cannot turn into a flood of requests
to the identity provider.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jwt

from nextcloud_mcp_server.auth.errors import OIDCUnavailable
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.outbound.client import BoundedClient, Bounds
from nextcloud_mcp_server.outbound.errors import OutboundError

__all__ = ["JWKSCache", "OIDCUnavailable", "ProviderMetadata", "idp_client"]

logger = logging.getLogger(__name__)

# Which key types can verify which algorithms.
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def idp_client(settings: Settings) -> BoundedClient:
    """The HTTP client for the identity provider: discovery, JWKS, introspection, token endpoint.
    Its answers are small: bounded by IDP_MAX_ANSWER_BYTES and IDP_REQUEST_DEADLINE_SECONDS, and
    asked for uncompressed, so the limit on the wire is the limit in memory."""
    bounds = Bounds(
        answer_bytes=settings.idp_max_answer_bytes,
        deadline=settings.idp_request_deadline_seconds,
        read_timeout=10.0,
        connect_timeout=10.0,
    )
    return BoundedClient(bounds, max_connections=16, headers={"Accept-Encoding": "identity"})


class ProviderMetadata:
    """Discovery document of the issuer, fetched once (single-flight) and kept."""

    def __init__(self, issuer: str, http: BoundedClient) -> None:
        self.issuer = issuer
        self._http = http
        self._document: dict[str, Any] | None = None
        self._lock = asyncio.Lock()

    def _candidates(self) -> list[str]:
        parts = urlsplit(self.issuer)
        path = parts.path.rstrip("/")
        oidc = f"{self.issuer.rstrip('/')}/.well-known/openid-configuration"
        # RFC 8414 §3.1: the well-known segment goes between host and path.
        rfc8414 = urlunsplit(
            (parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")
        )
        return [oidc, rfc8414]

    async def get(self) -> dict[str, Any]:
        if self._document is not None:
            return self._document
        async with self._lock:
            if self._document is None:
                self._document = await self._fetch()
        return self._document

    async def _fetch(self) -> dict[str, Any]:
        for url in self._candidates():
            try:
                response = await self._http.request("GET", url)
            except OutboundError as exc:
                raise OIDCUnavailable(f"identity provider {self.issuer} unreachable: {exc}") from None
            if response.status_code != 200:
                continue
            try:
                document = response.json()
            except (ValueError, RecursionError):
                continue
            if not isinstance(document, dict):  # a list or a string raised AttributeError, a 500
                continue
            # RFC 8414 §3.3: the issuer in the metadata must be the one we asked (no mix-up).
            if document.get("issuer") != self.issuer:
                raise OIDCUnavailable(
                    f"the metadata at {url} is for issuer {document.get('issuer')!r}, not {self.issuer!r} "
                    "(check OIDC_ISSUER, including a trailing slash)"
                )
            return dict(document)
        raise OIDCUnavailable(f"no OIDC or OAuth metadata found for issuer {self.issuer}")

    async def endpoint(self, name: str) -> str | None:
        value = (await self.get()).get(name)
        return str(value) if value else None


class JWKSCache:
    """Signing keys by `kid`, refetched on an unknown kid at most once per interval."""

    def __init__(
        self,
        jwks_uri: Callable[[], Awaitable[str]],
        http: BoundedClient,
        *,
        refetch_interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._jwks_uri = jwks_uri
        self._http = http
        self._interval = refetch_interval
        self._clock = clock
        self._keys: dict[str, tuple[jwt.PyJWK, str | None]] = {}  # kid -> (key, declared alg)
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def _refresh(self) -> None:
        uri = await self._jwks_uri()
        try:
            response = await self._http.request("GET", uri)
            if response.status_code != 200:
                raise OIDCUnavailable(f"could not fetch the JWKS at {uri}: HTTP {response.status_code}")
            document = response.json()
        except (OutboundError, ValueError, RecursionError) as exc:
            raise OIDCUnavailable(f"could not fetch the JWKS at {uri}: {exc}") from None
        listed = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(listed, list):
            raise OIDCUnavailable(f"the JWKS at {uri} holds no list of keys")
        keys: dict[str, tuple[jwt.PyJWK, str | None]] = {}
        for entry in listed:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            alg = entry.get("alg")
            try:
                key = jwt.PyJWK(entry)
            except (jwt.PyJWTError, TypeError, ValueError, AttributeError):
                continue  # a key we cannot use ("alg": ["RS256"] raised TypeError); others may serve
            keys[str(entry.get("kid", ""))] = (key, alg if isinstance(alg, str) else None)
        self._keys, self._fetched_at = keys, self._clock()
        self.fetches += 1

    async def key_for(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None:
        """The key to verify a token signed with `algorithm` by key `kid`, or None."""
        found = self._pick(kid, algorithm)
        if found is not None:
            return found
        async with self._lock:
            found = self._pick(kid, algorithm)  # another task may just have refetched
            if found is not None:
                return found
            due = self._fetched_at is None or self._clock() - self._fetched_at >= self._interval
            if not due:
                return None
            await self._refresh()
            return self._pick(kid, algorithm)

    def _pick(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None:
        family = _KEY_TYPES.get(algorithm[:2])
        if kid is not None:
            candidates = [self._keys[kid]] if kid in self._keys else []
        else:
            candidates = list(self._keys.values())
        usable = [
            key for key, declared in candidates if key.key_type == family and declared in (None, algorithm)
        ]
        return usable[0] if len(usable) == 1 or (kid is not None and usable) else None
