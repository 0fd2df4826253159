"""Client ID metadata documents: a `client_id` that is an https URL names a JSON document, fetched
here and turned into the client's registration.

The URL comes from anyone on the internet, so the fetch is fenced (server-side request forgery):
- https only, no credentials or fragment in the URL, a path required;
- the host is resolved here and every address checked: private, loopback, link-local, multicast,
  reserved and unspecified addresses are refused (unless AUTH_SERVER_CIMD_ALLOW_PRIVATE); the
  connection goes to the checked address (TLS still verifies the host name), so a second DNS
  answer cannot point it elsewhere;
- no redirects followed, no proxy; a size cap and an overall deadline (`outbound.client`);
- the document must be a JSON object whose `client_id` equals its URL, with redirect URIs, and a
  public client (`token_endpoint_auth_method` none): there is no secret to share with a URL.
Documents are cached (bounded, AUTH_SERVER_CIMD_CACHE_SECONDS); failures briefly too.
"""

from __future__ import annotations

import json
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from nextcloud_mcp_server.inbound.client_policy import registration_problem
from nextcloud_mcp_server.outbound.addresses import PublicOnlyResolver, check_literal, public_address
from nextcloud_mcp_server.outbound.client import BoundedClient, Bounds
from nextcloud_mcp_server.outbound.errors import AddressRefused, OutboundError

__all__ = ["CIMDError", "MetadataDocuments", "is_metadata_url", "public_address"]

MAX_CACHED = 1000
FAILURE_CACHE_SECONDS = 30.0


class CIMDError(Exception):
    """The document cannot be used; str() says why (for the log and the client's error)."""


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith("https://")


def _check_url(url: str) -> None:
    try:  # `https://[::1` raised ValueError from urlsplit, a 500 at /authorize, /token, /revoke
        parts = urlsplit(url)
        parts.port  # noqa: B018 (read for the ValueError a port out of range raises)
    except ValueError:
        raise CIMDError("a client ID metadata document URL must be a valid https URL") from None
    if parts.scheme != "https" or not parts.hostname:
        raise CIMDError("a client ID metadata document URL must be https")
    if parts.username or parts.password or parts.fragment:
        raise CIMDError("a client ID metadata document URL must not carry credentials or a fragment")
    if parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path:
        raise CIMDError("a client ID metadata document URL needs a plain path")


def _client(url: str, document: Any, scopes: list[str]) -> OAuthClientInformationFull:
    if not isinstance(document, dict):
        raise CIMDError("the client ID metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise CIMDError("the document's client_id is not its own URL")
    if (
        document.get("client_secret") is not None
        or document.get("token_endpoint_auth_method", "none") != "none"
    ):
        raise CIMDError(
            "a client ID metadata document describes a public client (token_endpoint_auth_method none)"
        )
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 20:
        raise CIMDError("the document needs redirect_uris (1-20 URLs)")
    name = document.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise CIMDError("client_name must be text of at most 200 characters")
    refused = registration_problem(uris, name)  # the one redirect URI and name policy (ADR 0034)
    if refused is not None:
        raise CIMDError(refused)
    wanted = document.get("scope")
    scope = " ".join(scopes) if wanted is None else " ".join(s for s in str(wanted).split() if s in scopes)
    try:
        return OAuthClientInformationFull.model_validate(
            {
                **{k: v for k, v in document.items() if k in OAuthClientInformationFull.model_fields},
                "client_id": url,
                "client_secret": None,
                "token_endpoint_auth_method": "none",
                "scope": scope,
                "grant_types": ["authorization_code", "refresh_token"],
            }
        )
    except ValidationError as exc:
        raise CIMDError(f"the document is not valid client metadata ({exc.error_count()} problems)") from None


class MetadataDocuments:
    """Fetches, validates and caches client ID metadata documents."""

    def __init__(
        self,
        *,
        scopes: list[str],
        allow_private: bool,
        ca_bundle: Path | None,
        max_bytes: int,
        timeout: float,
        cache_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.scopes = scopes
        self.max_bytes = max_bytes
        self.cache_seconds = cache_seconds
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, OAuthClientInformationFull | CIMDError]] = OrderedDict()
        self._allow_private = allow_private
        # No proxy from the environment: it would resolve the name itself, past the address check.
        self._http = BoundedClient(
            Bounds(answer_bytes=max_bytes, deadline=timeout, read_timeout=timeout, connect_timeout=timeout),
            max_connections=20,
            verify=ssl.create_default_context(cafile=str(ca_bundle)) if ca_bundle else True,
            headers={"Accept": "application/json", "Accept-Encoding": "identity"},
            resolver=None if allow_private else PublicOnlyResolver(),
            use_proxies=False,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get(self, url: str) -> OAuthClientInformationFull:
        """The client the document at `url` describes; raises CIMDError."""
        cached = self._cache.get(url)
        if cached is not None and cached[0] > self._clock():
            self._cache.move_to_end(url)
            if isinstance(cached[1], CIMDError):
                raise cached[1]
            return cached[1]
        try:
            client = await self._fetch(url)
        except CIMDError as exc:
            self._remember(url, exc, FAILURE_CACHE_SECONDS)
            raise
        self._remember(url, client, self.cache_seconds)
        return client

    def _remember(self, url: str, value: OAuthClientInformationFull | CIMDError, seconds: float) -> None:
        self._cache[url] = (self._clock() + seconds, value)
        self._cache.move_to_end(url)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)

    async def _fetch(self, url: str) -> OAuthClientInformationFull:
        _check_url(url)
        try:
            if not self._allow_private:
                check_literal(urlsplit(url).hostname or "")
            async with self._http.stream("GET", url) as response:
                if response.is_redirect:
                    raise CIMDError("the metadata document URL redirects; redirects are not followed")
                if response.status_code != 200:
                    raise CIMDError(f"the metadata document URL answered HTTP {response.status_code}")
                body = await response.read()
        except (OutboundError, AddressRefused) as exc:
            raise CIMDError(f"cannot fetch the client ID metadata document: {exc}") from None
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise CIMDError("the client ID metadata document is not JSON") from None
        return _client(url, document, self.scopes)
