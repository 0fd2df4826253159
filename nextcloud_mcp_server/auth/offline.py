"""Offline access: Nextcloud credentials minted from each user's stored grant.

For a grant from the identity provider (`provider == "oidc"`), an access token is minted with
the stored refresh token and cached per user until shortly before it expires. Refresh is
single-flight per user: concurrent calls wait for the one refresh in progress. A rotated refresh
token is stored with a compare-and-swap on the grant's version, so a second replica refreshing
at the same time cannot make us lose it. If the provider answers `invalid_grant`, the grant is
dropped and the caller is asked for consent again (no error loop).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.credentials import NoCaller
from nextcloud_mcp_server.auth.errors import GrantMissing
from nextcloud_mcp_server.auth.oidc_client import InvalidGrant, OIDCClient
from nextcloud_mcp_server.nextcloud.auth import BearerCredential, Credential
from nextcloud_mcp_server.storage.store import Grant, Store

__all__ = ["GrantMissing", "OfflineCredentials"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Minted:
    credential: Credential
    refresh_at: float


class OfflineCredentials:
    """The `CredentialResolver` of offline-access mode."""

    def __init__(self, store: Store, oidc: OIDCClient, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.oidc = oidc
        self._clock = clock
        self._minted: dict[str, _Minted] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.refreshes: Counter[str] = Counter()

    def forget(self, subject: str) -> None:
        self._minted.pop(subject, None)

    def refresh_due_at(self, subject: str) -> float | None:
        """When the cached credential of `subject` will be refreshed (None: nothing cached)."""
        minted = self._minted.get(subject)
        return minted.refresh_at if minted else None

    async def credential_for(self, caller: Caller | None) -> Credential:
        if caller is None:
            raise NoCaller("no authenticated caller")
        minted = self._minted.get(caller.subject)
        if minted is not None and self._clock() < minted.refresh_at:
            return minted.credential
        lock = self._locks.setdefault(caller.subject, asyncio.Lock())
        async with lock:
            minted = self._minted.get(caller.subject)  # minted by whoever held the lock before us
            if minted is not None and self._clock() < minted.refresh_at:
                return minted.credential
            minted = await self._mint(caller.subject)
            self._minted[caller.subject] = minted
            return minted.credential

    async def _mint(self, subject: str) -> _Minted:
        for _ in range(3):
            grant = await self.store.get_grant(subject)
            if grant is None:
                raise GrantMissing(subject)
            try:
                tokens = await self.oidc.refresh(grant.secret)
            except InvalidGrant as exc:
                current = await self.store.get_grant(subject)
                if current is not None and current.version != grant.version:
                    continue  # rotated (or re-granted) meanwhile: try again with the new one
                await self._drop(grant, f"the identity provider refused the refresh token ({exc})")
                raise GrantMissing(subject) from None
            self.refreshes[subject] += 1
            rotated = tokens.refresh_token and tokens.refresh_token != grant.secret
            if rotated and not await self.store.replace_secret(
                subject, grant.version, tokens.refresh_token or ""
            ):
                # Another process rotated it first; its token is the valid one: start over.
                logger.info("refresh token of %s was rotated elsewhere; retrying", subject)
                continue
            await self.store.audit(subject, "refreshed", f"expires in {int(tokens.expires_in)} s")
            lifetime = max(tokens.expires_in, 1.0)
            # Refresh early enough that a token handed out now outlives the call that uses it, and
            # small clock differences with Nextcloud: 10% of the lifetime, at least 5 s, at most
            # a minute, never more than half the lifetime.
            margin = min(60.0, max(5.0, lifetime / 10), lifetime / 2)
            credential = BearerCredential(tokens.access_token, grant.user_id)
            return _Minted(credential, self._clock() + lifetime - margin)
        raise GrantMissing(subject)

    async def _drop(self, grant: Grant, reason: str) -> None:
        await self.store.delete_grant(grant.subject)
        await self.store.audit(grant.subject, "failed", reason)
        self.forget(grant.subject)
        logger.info("grant of %s dropped: %s", grant.subject, reason)
