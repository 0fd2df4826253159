"""The authorization server's tables (migrated once, a newer schema refused), signing keys
(sealed at rest, rotation keeps the previous public key until its tokens expired), clients
(pre-registered, dynamic ones forgotten when unused, sealed at rest) on both stores (a SQLite
file, a PostgreSQL database), and the metadata document cache (bounded)."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest
from mcp.shared.auth import OAuthClientInformationFull

from nextcloud_mcp_server.authz import cimd
from nextcloud_mcp_server.authz.cimd import CIMDError, MetadataDocuments, public_address
from nextcloud_mcp_server.authz.clients import Clients
from nextcloud_mcp_server.authz.db import AUTHZ_MIGRATIONS
from nextcloud_mcp_server.authz.keys import LEEWAY_SECONDS, SigningKeys
from nextcloud_mcp_server.authz.service import open_connection
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.authz.places import Place, place

__all__ = ["place"]  # the fixture, used by name

DAY = 86400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def keys_on(place: Place | SQLiteStore, clock: Clock, algorithm: str = "ES256") -> SigningKeys:
    return SigningKeys(
        place.db, place.cipher, algorithm=algorithm, max_age_seconds=90 * DAY, token_lifetime_seconds=600,
        clock=clock,
    )  # fmt: skip


async def test_the_tables_migrate_once_and_a_newer_schema_is_refused(place: Place) -> None:
    await open_connection(place.store)  # a second start: nothing to do
    assert await place.rows("SELECT version FROM authz_schema_version") == [(len(AUTHZ_MIGRATIONS),)]
    await place.db.execute("UPDATE authz_schema_version SET version = 99")
    await place.db.commit()
    with pytest.raises(RuntimeError, match="version 99, newer than this server understands"):
        await open_connection(place.store)
    assert await place.rows("SELECT version FROM authz_schema_version") == [(99,)]


async def test_the_first_start_makes_a_key_sealed_at_rest(place: Place, clock: Clock) -> None:
    keys = keys_on(place, clock)
    await keys.load()
    [public] = keys.jwks()["keys"]
    assert public["kty"] == "EC"
    assert "d" not in public
    [(sealed,)] = await place.rows("SELECT private_key FROM authz_keys")
    assert "PRIVATE KEY" not in sealed
    again = keys_on(place, clock)  # a restart: the same key, read back and unsealed
    await again.load()
    assert again.jwks() == keys.jwks()
    token = again.sign({"sub": "alice"})
    assert jwt.get_unverified_header(token)["kid"] == public["kid"]


async def test_rotation_keeps_the_old_public_key_until_its_tokens_expired(place: Place, clock: Clock) -> None:
    keys = keys_on(place, clock)
    await keys.load()
    old = keys.sign({"sub": "alice"})
    old_kid = jwt.get_unverified_header(old)["kid"]
    clock.now += 91 * DAY  # older than AUTH_SERVER_KEY_MAX_AGE_DAYS: housekeeping rotates
    await keys.tidy()
    new_kid = jwt.get_unverified_header(keys.sign({"sub": "alice"}))["kid"]
    assert new_kid != old_kid
    assert {k["kid"] for k in keys.jwks()["keys"]} == {old_kid, new_kid}
    assert await keys.key_for(old_kid, "ES256") is not None  # old tokens still verify
    clock.now += 600 + LEEWAY_SECONDS + 1
    await keys.tidy()
    assert {k["kid"] for k in keys.jwks()["keys"]} == {new_kid}
    assert await keys.key_for(old_kid, "ES256") is None


async def test_changing_the_algorithm_rotates(place: Place, clock: Clock) -> None:
    await keys_on(place, clock).load()
    rsa = keys_on(place, clock, "RS256")
    await rsa.load()
    assert sorted(k["kty"] for k in rsa.jwks()["keys"]) == ["EC", "RSA"]
    assert jwt.get_unverified_header(rsa.sign({"sub": "a"}))["alg"] == "RS256"


async def test_a_key_sealed_with_a_removed_encryption_key_is_replaced(tmp_path: Path, clock: Clock) -> None:
    first = SQLiteStore(tmp_path / "s.sqlite3", Cipher([generate_key()]))
    await first.open()
    await open_connection(first)
    keys = keys_on(first, clock)
    await keys.load()
    old_kid = keys.jwks()["keys"][0]["kid"]
    await first.close()
    second = SQLiteStore(tmp_path / "s.sqlite3", Cipher([generate_key()]))  # the old key is gone
    await second.open()
    try:
        replaced = keys_on(second, clock)
        await replaced.load()
        assert jwt.get_unverified_header(replaced.sign({"sub": "a"}))["kid"] != old_kid
    finally:
        await second.close()


def clients_on(place: Place, clock: Clock, configured: list[dict[str, object]] | None = None) -> Clients:
    return Clients(
        place.db, place.cipher, configured=configured or [], scopes=["notes:read", "notes:write"],
        documents=None, unused_seconds=7 * DAY, clock=clock,
    )  # fmt: skip


async def test_dynamic_clients_are_sealed_and_forgotten_when_unused(place: Place, clock: Clock) -> None:
    clients = clients_on(place, clock)
    used = OAuthClientInformationFull(
        client_id="used", client_secret="s3cret-of-used", redirect_uris=["https://a/cb"]
    )  # type: ignore[list-item]
    idle = OAuthClientInformationFull(client_id="idle", redirect_uris=["https://b/cb"])  # type: ignore[list-item]
    await clients.register(used)
    await clients.register(idle)
    stored = " ".join(row[0] for row in await place.rows("SELECT info FROM authz_clients"))
    assert "s3cret-of-used" not in stored
    assert "https://a/cb" not in stored
    for _ in range(8):
        clock.now += DAY
        assert await clients.get("used") is not None  # in use: kept
    assert await clients.tidy() == 1
    assert await clients.get("idle") is None
    found = await clients.get("used")
    assert found is not None
    assert found.client_secret == "s3cret-of-used"


async def test_configured_clients_get_every_scope(place: Place, clock: Clock) -> None:
    clients = clients_on(
        place,
        clock,
        [{"client_id": "app", "redirect_uris": ["https://app.example/cb"], "client_secret": "x" * 20}],
    )
    app = await clients.get("app")
    assert app is not None
    assert app.scope == "notes:read notes:write"
    assert app.token_endpoint_auth_method == "client_secret_post"
    assert app.client_name == "app"
    assert await clients.get("https://docs.example/client.json") is None  # CIMD off: unknown


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),
        ("169.254.169.254", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("0.0.0.0", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),
        ("ff02::1", False),
    ],
)
def test_which_addresses_are_public(address: str, public: bool) -> None:
    assert public_address(address) is public


async def test_the_document_cache_is_bounded(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> None:
    monkeypatch.setattr(cimd, "MAX_CACHED", 3)
    documents = MetadataDocuments(
        scopes=["notes:read"], allow_private=False, ca_bundle=None, max_bytes=4096, timeout=1.0,
        cache_seconds=300, clock=clock,
    )  # fmt: skip
    try:
        for i in range(5):  # refused before any fetch (http), and remembered briefly
            with pytest.raises(CIMDError, match="must be https"):
                await documents.get(f"http://example.com/{i}.json")
        assert len(documents._cache) == 3
        assert list(documents._cache) == [f"http://example.com/{i}.json" for i in (2, 3, 4)]
    finally:
        await documents.aclose()
