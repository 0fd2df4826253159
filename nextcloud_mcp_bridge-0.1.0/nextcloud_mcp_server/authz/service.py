"""The authorization server as one object the runtime owns: built from the settings, opened on the
store's connection after the store opened, tidied by housekeeping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jwt

from nextcloud_mcp_server.authz.cimd import MetadataDocuments
from nextcloud_mcp_server.authz.clients import Clients
from nextcloud_mcp_server.authz.db import AUTHZ_LOCK, AUTHZ_MIGRATIONS, too_new
from nextcloud_mcp_server.authz.keys import SigningKeys
from nextcloud_mcp_server.authz.provider import Provider
from nextcloud_mcp_server.authz.requests import StoredAuthorizationRequests
from nextcloud_mcp_server.authz.tokens import Tokens
from nextcloud_mcp_server.storage.connection import Connection

if TYPE_CHECKING:
    from nextcloud_mcp_server.config import Settings
    from nextcloud_mcp_server.storage.backends import StoreBackend
    from nextcloud_mcp_server.storage.crypto import Cipher

__all__ = ["AuthServer", "NotOpen", "open_connection"]

DAY = 86400.0


async def open_connection(store: StoreBackend) -> Connection:
    """The connection of an open store, with the authorization server's tables migrated."""
    await store.engine.migrate("authz_schema_version", AUTHZ_MIGRATIONS, too_new, lock=AUTHZ_LOCK)
    return store.engine.connection


class NotOpen(RuntimeError):
    """The authorization server is used before the runtime opened the store."""


class AuthServer:
    def __init__(
        self,
        settings: Settings,
        store: StoreBackend,
        cipher: Cipher,
        *,
        scopes: list[str],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.store = store
        self.cipher = cipher
        self.scopes = scopes
        self.issuer = settings.auth_server_issuer
        self._clock = clock
        self._provider: Provider | None = None
        self._documents: MetadataDocuments | None = None

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise NotOpen("the authorization server is not open")
        return self._provider

    @property
    def requests(self) -> StoredAuthorizationRequests:
        return self.provider.requests

    @property
    def keys(self) -> SigningKeys:
        return self.provider.tokens.keys

    async def open(self) -> None:
        s, db, clock = self.settings, await open_connection(self.store), self._clock
        keys = SigningKeys(
            db, self.cipher, algorithm=s.auth_server_signing_algorithm,
            max_age_seconds=s.auth_server_key_max_age_days * DAY,
            token_lifetime_seconds=s.auth_server_access_token_seconds, clock=clock,
        )  # fmt: skip
        await keys.load()
        tokens = Tokens(
            db, keys, issuer=self.issuer, audiences=s.audiences,
            access_seconds=s.auth_server_access_token_seconds,
            refresh_seconds=s.auth_server_refresh_token_days * DAY, clock=clock,
        )  # fmt: skip
        if s.auth_server_cimd_enabled:
            self._documents = MetadataDocuments(
                scopes=self.scopes, allow_private=s.auth_server_cimd_allow_private,
                ca_bundle=s.auth_server_cimd_ca_bundle, max_bytes=s.auth_server_cimd_max_bytes,
                timeout=s.auth_server_cimd_timeout_seconds, cache_seconds=s.auth_server_cimd_cache_seconds,
                clock=clock,
            )  # fmt: skip
        clients = Clients(
            db, self.cipher, configured=s.configured_clients(), scopes=self.scopes, documents=self._documents,
            unused_seconds=s.auth_server_dcr_unused_days * DAY, max_unused=s.auth_server_dcr_max_unused,
            clock=clock,
        )  # fmt: skip
        requests = StoredAuthorizationRequests(
            db, self.issuer, ttl=s.auth_server_request_ttl_seconds, clock=clock
        )
        self._provider = Provider(
            db, clients=clients, requests=requests, tokens=tokens, public_origin=s.public_origin,
            audiences=s.audiences, scopes=self.scopes, clock=clock,
        )  # fmt: skip

    async def aclose(self) -> None:
        if self._documents is not None:
            await self._documents.aclose()
            self._documents = None
        self._provider = None

    async def tidy(self) -> None:
        """Housekeeping: rotate an old signing key, forget what has expired."""
        if self._provider is None:
            return
        await self.keys.tidy()
        await self.provider.tokens.tidy()
        await self.provider.clients.tidy()
        await self.requests.expire()

    # --- for the bearer token verifier (the same path as an identity provider's tokens)

    async def key_for(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None:
        return await self.keys.key_for(kid, algorithm) if self._provider is not None else None

    async def is_revoked(self, claims: dict[str, Any]) -> bool:
        return await self.provider.tokens.is_revoked(claims)
