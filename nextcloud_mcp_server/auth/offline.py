"""Offline access: Nextcloud credentials minted from each user's stored grant.

The grant's provider (`consent_providers.py`) turns it into a credential: an access token minted
with a refresh token (identity provider or Nextcloud's OAuth2 app), cached per user until shortly
before it expires, or an app password (Login Flow v2), kept until Nextcloud refuses it. Minting is
single-flight per user: concurrent calls wait for the one in progress. A minted access token is
kept in the store for every replica (`storage/access_tokens.py`, ADR 0063): a replica reads it
before it takes the store's refresh lock and again under the lock, and refreshes only when no valid
one is there, so replicas never invalidate each other's tokens. A rotated refresh token is stored
with a compare-and-swap on the grant's version, so a second replica refreshing at the same time
cannot make us lose it. If the issuer refuses the grant, or Nextcloud refuses what was minted
from it (`refused`), the grant is dropped and the caller is asked for consent again (no error
loop). A grant the issuer fails on while it answers others (`GrantBroken`: Nextcloud's 500 "HMAC
does not match") is dropped so too once that has lasted (`BROKEN_AFTER` refreshes over at least
`BROKEN_FOR_SECONDS`, ADR 0064); until then the call meets Nextcloud's error. A dropped grant's
last credential is deleted at Nextcloud where it still can be, and the person is told otherwise.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.consent_providers import ConsentProvider, GrantBroken, GrantRefused
from nextcloud_mcp_server.auth.credentials import NoCaller
from nextcloud_mcp_server.auth.errors import GrantMissing
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential, Credential
from nextcloud_mcp_server.storage.errors import GrantUnreadable
from nextcloud_mcp_server.storage.records import Grant
from nextcloud_mcp_server.storage.store import Store

__all__ = ["GrantMissing", "OfflineCredentials"]

logger = logging.getLogger(__name__)

# A grant the issuer fails on (and only on it) is dropped at the third such refresh, if ten
# seconds or more passed since the first: one failure may be Nextcloud's passing trouble, a
# lasting one is the grant's (ADR 0064).
BROKEN_AFTER = 3
BROKEN_FOR_SECONDS = 10.0
_DEVICES = "Settings > Security > Devices & sessions"


@dataclass(frozen=True)
class _Minted:
    credential: Credential
    refresh_at: float
    version: int  # of the grant it was minted from


class OfflineCredentials:
    """The `CredentialResolver` of offline-access mode."""

    def __init__(
        self,
        store: Store,
        providers: Mapping[str, ConsentProvider],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.providers = providers
        self._clock = clock
        self._minted: dict[str, _Minted] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.refreshes: Counter[str] = Counter()
        self._broken: dict[tuple[str, int], tuple[int, float]] = {}  # (subject, version): count, since

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
            minted = await self._shared(caller.subject) or await self._mint_alone(caller.subject)
            self._minted[caller.subject] = minted
            return minted.credential

    async def refused(self, subject: str, since: float) -> bool:
        """Nextcloud answered 401 to a credential of `subject` used by a call that began at
        `since`. Drop the grant it came from (True) - unless the grant changed since (another
        replica rotated it, a new consent): then only the cached credential is dropped and the
        call may be tried again (False)."""
        minted = self._minted.pop(subject, None)
        try:
            grant = await self.store.get_grant(subject)
        except GrantUnreadable:
            return True  # a consent replaces it
        if grant is None:
            return True
        if grant.updated_at > since or (minted is not None and minted.version != grant.version):
            return False
        await self._drop(grant, "Nextcloud refused the stored credential (HTTP 401)", revoke=True)
        return True

    async def _mint_alone(self, subject: str) -> _Minted:
        """Mint while no other replica mints for `subject` (a refresh token is spent once)."""
        lock = getattr(self.store, "refresh_lock", None)
        if lock is None:
            return await self._mint(subject)
        async with lock(subject):
            # The replica that held the lock before us may have refreshed: use its token.
            return await self._shared(subject) or await self._mint(subject)

    async def _shared(self, subject: str) -> _Minted | None:
        """The access token some replica minted from the current grant, while it is good."""
        shared = await self.store.access_tokens.get(subject)
        if shared is None or self._clock() >= shared.refresh_at:
            return None
        credential = _credential_from(shared.value)
        return None if credential is None else _Minted(credential, shared.refresh_at, shared.grant_version)

    async def _mint(self, subject: str) -> _Minted:
        for _ in range(3):
            try:
                grant = await self.store.get_grant(subject)
            except GrantUnreadable as exc:
                # Kept (the administrator may restore a key); a new consent replaces it.
                logger.warning("the stored grant of %s cannot be read: %s", subject, exc)
                raise
            if grant is None:
                raise GrantMissing(subject)
            provider = self.providers.get(grant.provider)
            if provider is None:
                await self._drop(grant, f"the grant's provider {grant.provider} is no longer configured")
                raise GrantMissing(subject)
            try:
                minted = await provider.mint(grant)
            except GrantRefused as exc:
                current = await self.store.get_grant(subject)
                if current is not None and current.version != grant.version:
                    continue  # rotated (or re-granted) meanwhile: try again with the new one
                raise await self._give_up(grant, provider, str(exc)) from None
            except GrantBroken as exc:
                if not self._lasting(grant):
                    logger.warning("refreshing the grant of %s failed: %s", subject, exc)
                    raise exc.cause from None
                raise await self._give_up(grant, provider, str(exc)) from None
            self._broken.pop((subject, grant.version), None)
            version = grant.version
            if minted.rotated and minted.rotated != grant.secret:
                if not await self.store.replace_secret(subject, grant.version, minted.rotated):
                    # Another process rotated it first; its token is the valid one: start over.
                    logger.info("refresh token of %s was rotated elsewhere; retrying", subject)
                    continue
                version += 1
            if minted.lifetime is None:
                return _Minted(minted.credential, math.inf, version)
            self.refreshes[subject] += 1
            await self.store.audit(subject, "refreshed", f"expires in {int(minted.lifetime)} s")
            lifetime = max(minted.lifetime, 1.0)
            # Refresh early enough that a token handed out now outlives the call that uses it, and
            # small clock differences with Nextcloud: 10% of the lifetime, at least 5 s, at most
            # a minute, never more than half the lifetime.
            margin = min(60.0, max(5.0, lifetime / 10), lifetime / 2)
            refresh_at = self._clock() + lifetime - margin
            await self.store.access_tokens.put(subject, version, _serialised(minted.credential), refresh_at)
            return _Minted(minted.credential, refresh_at, version)
        raise GrantMissing(subject)

    def _lasting(self, grant: Grant) -> bool:
        """Count one more failure of `grant` that is its own; True once it has lasted."""
        key, now = (grant.subject, grant.version), self._clock()
        count, since = self._broken.get(key, (0, now))
        self._broken[key] = (count + 1, since)
        return count + 1 >= BROKEN_AFTER and now - since >= BROKEN_FOR_SECONDS

    async def _give_up(self, grant: Grant, provider: ConsentProvider, reason: str) -> GrantMissing:
        """Drop a grant the issuer refuses for good; delete its last credential at Nextcloud (it
        would stay in the person's devices); what to ask the person with."""
        self._broken.pop((grant.subject, grant.version), None)
        credential = await self._last_credential(grant.subject)
        deleted = None if credential is None else await self._delete(provider, grant.subject, credential)
        await self._drop(grant, f"{reason}; its last credential deleted at Nextcloud: {deleted}")
        note = "Your previous connection of this server to your Nextcloud is no longer accepted"
        if deleted:
            note += ", which was removed from your Nextcloud"
        elif deleted is False or (credential is None and grant.provider != "oidc"):
            note += f"; if it is still listed in your Nextcloud ({_DEVICES}), remove it there"
        return GrantMissing(grant.subject, note + ".")

    async def _delete(self, provider: ConsentProvider, subject: str, credential: Credential) -> bool | None:
        try:
            return await provider.delete(credential)
        except Exception as exc:  # best effort: dropping the grant must not fail
            logger.warning("deleting the last credential of %s failed: %s", subject, exc)
            return False

    async def _last_credential(self, subject: str) -> Credential | None:
        """The credential last minted for `subject` by any replica (else here), expired or not."""
        shared = await self.store.access_tokens.get(subject)
        if shared is not None:
            return _credential_from(shared.value)
        minted = self._minted.get(subject)
        return None if minted is None else minted.credential

    async def _drop(self, grant: Grant, reason: str, *, revoke: bool = False) -> None:
        """Delete the grant; with `revoke`, also where it was issued (RFC 7009 at the IdP): its
        refresh token may still be valid there although this server will never use it again."""
        if revoke and (provider := self.providers.get(grant.provider)) is not None:
            try:
                revoked = await provider.revoke(grant)
            except Exception as exc:  # best effort: dropping it here must not fail
                logger.warning("revoking the dropped grant of %s failed: %s", grant.subject, exc)
                revoked = False
            reason += f"; revoked at the issuer: {revoked}"
        await self.store.delete_grant(grant.subject)
        await self.store.audit(grant.subject, "failed", reason)
        self.forget(grant.subject)
        logger.info("grant of %s dropped: %s", grant.subject, reason)


def _serialised(credential: Credential) -> str:
    """The credential as the store keeps it (sealed there)."""
    if isinstance(credential, BearerCredential):
        fields = {"token": credential.token, "username": credential.username, "login": credential.login}
        return json.dumps({"bearer": fields | {"basic_for_notes": credential.basic_for_notes}})
    fields = {"username": credential.username, "password": credential.password, "uid": credential.uid}
    return json.dumps({"basic": fields})


def _credential_from(value: str) -> Credential | None:
    """What `_serialised` made; None for anything else (the caller refreshes instead)."""
    try:
        data = json.loads(value)
        if "bearer" in data:
            bearer = data["bearer"]
            return BearerCredential(
                str(bearer["token"]),
                str(bearer["username"]),
                bool(bearer["basic_for_notes"]),
                str(bearer["login"]),
            )
        basic = data["basic"]
        return BasicCredential(str(basic["username"]), str(basic["password"]), str(basic["uid"]))
    except (ValueError, TypeError, KeyError):
        return None
