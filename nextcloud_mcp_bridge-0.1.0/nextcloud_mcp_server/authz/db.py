"""The authorization server's tables, on the store's engine (SQLite or PostgreSQL).

They have their own schema version (`authz_schema_version`), so the consent store's migrations
and these never collide. Nothing here is secret in clear: codes and refresh tokens are stored as
SHA-256 digests, private signing keys sealed with the store's cipher (`keys.py`).
"""

from __future__ import annotations

import hashlib

from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["AUTHZ_LOCK", "AUTHZ_MIGRATIONS", "digest", "reseal", "too_new"]

AUTHZ_MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE authz_requests (
        id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        client_name TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        redirect_explicit INTEGER NOT NULL,
        scopes TEXT NOT NULL,
        resource TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        state TEXT,
        expires_at REAL NOT NULL,
        user_id TEXT,
        status TEXT NOT NULL DEFAULT 'pending'
    );
    CREATE TABLE authz_codes (
        code_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        redirect_explicit INTEGER NOT NULL,
        code_challenge TEXT NOT NULL,
        scopes TEXT NOT NULL,
        resource TEXT NOT NULL,
        subject TEXT NOT NULL,
        expires_at REAL NOT NULL,
        used_at REAL,
        family TEXT
    );
    CREATE TABLE authz_clients (
        client_id TEXT PRIMARY KEY,
        info TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_used_at REAL NOT NULL
    );
    CREATE TABLE authz_refresh (
        token_hash TEXT PRIMARY KEY,
        family TEXT NOT NULL,
        client_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        resource TEXT NOT NULL,
        subject TEXT NOT NULL,
        expires_at REAL NOT NULL,
        rotated_at REAL
    );
    CREATE INDEX authz_refresh_family ON authz_refresh (family);
    CREATE TABLE authz_revoked (
        what TEXT PRIMARY KEY,
        until REAL NOT NULL
    );
    CREATE TABLE authz_keys (
        kid TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        private_key TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        created_at REAL NOT NULL,
        retired_at REAL
    )
    """,
    # 2: when a dynamically registered client first got a token (NULL: never) - the cap on unused
    # registrations counts the others (AUTH_SERVER_DCR_MAX_UNUSED)
    """
    ALTER TABLE authz_clients ADD COLUMN used_at REAL;
    UPDATE authz_clients SET used_at = last_used_at WHERE last_used_at > created_at
    """,
]


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


AUTHZ_LOCK = 0x6E634D4341  # "ncMCA": PostgreSQL's advisory lock for these migrations


def too_new(current: int) -> RuntimeError:
    return RuntimeError(
        f"the store's authorization server tables have version {current}, newer than this "
        f"server understands ({len(AUTHZ_MIGRATIONS)}); upgrade the server"
    )


async def reseal(db: Connection, cipher: Cipher) -> int:
    """Re-encrypt the sealed columns (signing keys, registered clients) under the cipher's
    current key (`keys rotate`); what cannot be read is left alone. Returns how many changed."""
    changed = 0
    for table, key_column, column, field in (
        ("authz_keys", "kid", "private_key", "private_key"),
        ("authz_clients", "client_id", "info", "info"),
    ):
        async with db.execute(f"SELECT {key_column}, {column} FROM {table}") as cursor:  # noqa: S608 - constants
            rows = await cursor.fetchall()
        for subject, sealed in rows:
            if not sealed or Cipher.key_id_of(sealed) == cipher.current_key_id:
                continue
            try:
                plain = cipher.decrypt(sealed, table=table, subject=subject, field=field)
            except DecryptionFailed:
                continue
            resealed = cipher.encrypt(plain, table=table, subject=subject, field=field)
            await db.execute(
                f"UPDATE {table} SET {column} = ? WHERE {key_column} = ?",  # noqa: S608 - constants
                (resealed, subject),
            )
            changed += 1
    await db.commit()
    return changed
