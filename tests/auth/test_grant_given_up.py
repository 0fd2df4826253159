"""When a grant is given up (ADR 0064): a refusal for good at once; a failure that is the grant's
own (Nextcloud's 500 for it while it answers others) only once it has lasted; then its last
credential is deleted at Nextcloud and the person is told what became of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.consent_providers import GrantBroken, GrantRefused, Minted
from nextcloud_mcp_server.auth.errors import GrantMissing
from nextcloud_mcp_server.auth.offline import BROKEN_AFTER, BROKEN_FOR_SECONDS, OfflineCredentials
from nextcloud_mcp_server.nextcloud.auth import BearerCredential, Credential
from nextcloud_mcp_server.nextcloud.errors import ServerError
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import Grant, SQLiteStore

ALICE = Caller(subject="alice", user_id="alice", scopes=frozenset(), token="")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Issuer:
    """A provider whose next answers the test sets: a token, GrantBroken or GrantRefused."""

    def __init__(self, name: str = "nextcloud-oauth2", deletes: bool | None = True) -> None:
        self.name = name
        self.next: str = "token"
        self.deletes = deletes
        self.deleted: list[Credential] = []
        self.minted = 0

    async def mint(self, grant: Grant) -> Minted:
        if self.next == "broken":
            cause = ServerError("nextcloud", "Nextcloud failed (500)", status=500)
            raise GrantBroken("Nextcloud's token endpoint failed for this grant (HTTP 500)", cause)
        if self.next == "refused":
            raise GrantRefused("Nextcloud refused the refresh token (invalid_request)")
        self.minted += 1
        return Minted(BearerCredential(f"at-{self.minted}", grant.user_id), 3600.0, f"rt-{self.minted}")

    async def delete(self, credential: Credential) -> bool | None:
        self.deleted.append(credential)
        return self.deletes


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "store.sqlite3", Cipher([generate_key()]))
    await opened.open()
    await opened.save_grant(Grant("alice", "alice", "nextcloud-oauth2", "refresh_token", "rt-0"))
    yield opened
    await opened.close()


async def test_a_failure_of_the_grants_own_is_given_up_only_once_it_lasted(store: SQLiteStore) -> None:
    clock, issuer = Clock(), Issuer()
    credentials = OfflineCredentials(store, {issuer.name: issuer}, clock=clock)
    first = await credentials.credential_for(ALICE)
    issuer.next = "broken"
    clock.now += 3600
    for _ in range(BROKEN_AFTER + 1):  # quickly repeated: Nextcloud's error each time, grant kept
        with pytest.raises(ServerError):
            await credentials.credential_for(ALICE)
    assert await store.get_grant("alice") is not None
    clock.now += BROKEN_FOR_SECONDS
    with pytest.raises(GrantMissing) as missing:
        await credentials.credential_for(ALICE)
    assert await store.get_grant("alice") is None
    assert issuer.deleted == [first]  # the last token, though expired here, deleted at Nextcloud
    assert "removed from your Nextcloud" in missing.value.note
    [event] = [e for e in await store.audit_events("alice") if e.event == "failed"]
    assert "failed for this grant (HTTP 500)" in event.detail
    assert "deleted at Nextcloud: True" in event.detail


async def test_a_success_in_between_starts_the_count_again(store: SQLiteStore) -> None:
    clock, issuer = Clock(), Issuer()
    credentials = OfflineCredentials(store, {issuer.name: issuer}, clock=clock)
    for _ in range(3):
        issuer.next = "broken"
        for _ in range(BROKEN_AFTER - 1):
            clock.now += BROKEN_FOR_SECONDS
            with pytest.raises(ServerError):
                await credentials.credential_for(ALICE)
        issuer.next = "token"
        await credentials.credential_for(ALICE)
        clock.now += 3600
    assert await store.get_grant("alice") is not None


async def test_a_refused_grant_whose_credential_cannot_be_deleted_tells_the_person_where_to(
    store: SQLiteStore,
) -> None:
    clock, issuer = Clock(), Issuer(deletes=False)
    credentials = OfflineCredentials(store, {issuer.name: issuer}, clock=clock)
    await credentials.credential_for(ALICE)
    issuer.next, clock.now = "refused", clock.now + 3600
    with pytest.raises(GrantMissing) as missing:
        await credentials.credential_for(ALICE)
    assert "Devices & sessions" in missing.value.note
    assert await store.get_grant("alice") is None


async def test_an_identity_providers_token_is_not_nextclouds_to_delete(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "oidc.sqlite3", Cipher([generate_key()]))
    await store.open()
    try:
        await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt-0"))
        clock, issuer = Clock(), Issuer(name="oidc", deletes=None)
        credentials = OfflineCredentials(store, {issuer.name: issuer}, clock=clock)
        await credentials.credential_for(ALICE)
        issuer.next, clock.now = "refused", clock.now + 3600
        with pytest.raises(GrantMissing) as missing:
            await credentials.credential_for(ALICE)
    finally:
        await store.close()
    note = "Your previous connection of this server to your Nextcloud is no longer accepted."
    assert missing.value.note == note  # nothing about Nextcloud's devices: not its token
