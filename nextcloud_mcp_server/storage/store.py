"""The consent store: grants (encrypted), elicitations, OAuth states, audit trail.

`Store` is the interface the rest of the server uses; `SQLiteStore` implements it on one SQLite
file in WAL mode, with a schema version and forward migrations. A server database could back the
same interface later.

Guarantees the callers rely on:
- secrets are only ever written encrypted (`Cipher`), bound to table, subject and field;
- a consent `state` is usable once (`consume_state` is one atomic UPDATE);
- an elicitation link is opened once, while pending and unexpired (`open_elicitation`);
- a grant's secret is replaced only if nobody replaced it meanwhile (`replace_secret` is a
  compare-and-swap on the grant's version), so a rotated refresh token is never lost.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Protocol

import aiosqlite

from nextcloud_mcp_server.logs import neutralise
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed
from nextcloud_mcp_server.storage.records import (
    GRANT_COLUMNS,
    MIGRATIONS,
    AuditEvent,
    ConsentError,
    ConsentState,
    Elicitation,
    Grant,
    StoreError,
    grant_from_row,
    opening_refused,
    state_hash,
)

__all__ = [
    "AuditEvent",
    "ConsentError",
    "ConsentState",
    "Elicitation",
    "Grant",
    "SQLiteStore",
    "Store",
    "StoreError",
]


class Store(Protocol):
    async def get_grant(self, subject: str) -> Grant | None: ...
    async def save_grant(self, grant: Grant) -> None: ...
    async def replace_secret(self, subject: str, expected_version: int, secret: str) -> bool: ...
    async def delete_grant(self, subject: str) -> bool: ...
    async def grant_subjects(self, prefix: str, limit: int = 1000) -> list[str]: ...
    async def create_elicitation(self, subject: str, ttl: float, user_id: str = "") -> Elicitation: ...
    async def get_elicitation(self, elicitation_id: str) -> Elicitation | None: ...
    async def reusable_elicitation(self, subject: str, user_id: str, until: float) -> Elicitation | None: ...
    async def pending_elicitations(self, subject: str) -> int: ...
    async def open_elicitation(self, elicitation_id: str) -> Elicitation: ...
    async def finish_elicitation(
        self, elicitation_id: str, status: str, error: str | None = None
    ) -> None: ...
    async def create_state(
        self, elicitation_id: str, subject: str, verifier: str, nonce: str, ttl: float
    ) -> str: ...
    async def consume_state(self, state: str) -> ConsentState | None: ...
    async def audit(self, subject: str, event: str, detail: str = "") -> None: ...
    async def audit_events(self, subject: str | None = None, limit: int = 100) -> list[AuditEvent]: ...
    async def expire(self) -> int: ...


class SQLiteStore:
    """The store on one SQLite file (WAL). Open with `await store.open()`; close with `close()`."""

    def __init__(self, path: Path, cipher: Cipher, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.cipher = cipher
        self._clock = clock
        self._db: aiosqlite.Connection | None = None
        self.unreadable_grants: list[str] = []  # found by the last rotate_keys()
        self.dropped_states = 0

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise StoreError("the store is not open")
        return self._db

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = await aiosqlite.connect(self.path)
            await self.db.execute("PRAGMA journal_mode=WAL")
            await self.db.execute("PRAGMA synchronous=NORMAL")
            await self.db.execute("PRAGMA busy_timeout=5000")
            await self._migrate()
            await self._check_keys()
        except aiosqlite.Error as exc:
            await self.close()
            raise StoreError(f"cannot use the store at {self.path}: {exc}") from None
        except BaseException:
            await self.close()  # the connection's thread must not outlive a failed open
            raise

    async def ping(self) -> None:
        """A trivial query: raises when the file cannot be read."""
        async with self.db.execute("SELECT 1 FROM schema_version") as cursor:
            await cursor.fetchone()

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def _migrate(self) -> None:
        await self.db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        async with self.db.execute("SELECT version FROM schema_version") as cursor:
            row = await cursor.fetchone()
        current = int(row[0]) if row else 0
        if current > len(MIGRATIONS):
            raise StoreError(
                f"the store at {self.path} has schema version {current}, newer than this server "
                f"understands ({len(MIGRATIONS)}); upgrade the server"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            # A migration and its version bump commit together (SQLite DDL is transactional).
            await self.db.execute("BEGIN")
            for statement in filter(str.strip, MIGRATIONS[version - 1].split(";")):
                await self.db.execute(statement)
            await self.db.execute("DELETE FROM schema_version")
            await self.db.execute("INSERT INTO schema_version VALUES (?)", (version,))
            await self.db.commit()

    async def _check_keys(self) -> None:
        """Refuse to start when the configured keys cannot read what is stored (nothing is
        changed or deleted: adding the missing key back makes everything readable again)."""
        async with self.db.execute("SELECT DISTINCT key_id FROM grants") as cursor:
            stored = {row[0] for row in await cursor.fetchall()}
        unknown = stored - set(self.cipher.key_ids)
        if unknown:
            raise StoreError(
                f"stored grants are encrypted with key(s) {', '.join(sorted(unknown))}, which "
                "TOKEN_ENCRYPTION_KEY does not contain; configure them (the current key first)"
            )

    # --- grants

    def _seal(self, subject: str, secret: str) -> str:
        return self.cipher.encrypt(secret, table="grants", subject=subject, field="secret")

    async def get_grant(self, subject: str) -> Grant | None:
        query = f"SELECT {GRANT_COLUMNS} FROM grants WHERE subject = ?"  # noqa: S608 (constant)
        async with self.db.execute(query, (subject,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else grant_from_row(row, self.cipher)

    async def save_grant(self, grant: Grant) -> None:
        now = self._clock()
        sealed = self._seal(grant.subject, grant.secret)
        await self.db.execute(
            "INSERT INTO grants (subject, user_id, provider, kind, secret, key_id, scopes, created_at, "
            "updated_at, login) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(subject) DO UPDATE SET user_id=excluded.user_id, "
            "provider=excluded.provider, kind=excluded.kind, secret=excluded.secret, key_id=excluded.key_id, "
            "scopes=excluded.scopes, created_at=excluded.created_at, updated_at=excluded.updated_at, "
            "login=excluded.login, version=grants.version + 1",
            (grant.subject, grant.user_id, grant.provider, grant.kind, sealed, self.cipher.current_key_id,
             grant.scopes, now, now, grant.login),
        )  # fmt: skip
        await self.db.commit()

    async def replace_secret(self, subject: str, expected_version: int, secret: str) -> bool:
        cursor = await self.db.execute(
            "UPDATE grants SET secret = ?, key_id = ?, updated_at = ?, version = version + 1 "
            "WHERE subject = ? AND version = ?",
            (
                self._seal(subject, secret),
                self.cipher.current_key_id,
                self._clock(),
                subject,
                expected_version,
            ),
        )
        await self.db.commit()
        return cursor.rowcount == 1

    async def delete_grant(self, subject: str) -> bool:
        cursor = await self.db.execute("DELETE FROM grants WHERE subject = ?", (subject,))
        await self.db.commit()
        return cursor.rowcount == 1

    async def grant_subjects(self, prefix: str, limit: int = 1000) -> list[str]:
        """Subjects of stored grants that start with `prefix` (housekeeping), at most `limit`."""
        query = "SELECT subject FROM grants WHERE substr(subject, 1, ?) = ? ORDER BY subject LIMIT ?"
        async with self.db.execute(query, (len(prefix), prefix, limit)) as cursor:
            return [str(row[0]) for row in await cursor.fetchall()]

    def __str__(self) -> str:
        return str(self.path)

    @contextlib.asynccontextmanager
    async def refresh_lock(self, subject: str) -> AsyncIterator[None]:
        """One replica per SQLite file: the in-process lock and the compare-and-swap suffice."""
        yield

    async def announce_completion(self, elicitation_id: str) -> None:
        """Nothing to tell: no other replica shares an SQLite file."""

    def listen_completions(self, handler: Callable[[str], Awaitable[object]]) -> None:
        """No other replica announces anything."""

    async def rotate_keys(self) -> int:
        """Re-encrypt every secret under the current key; returns how many were rewritten.

        Nothing unreadable stops it: a grant that cannot be decrypted is left as it is and named
        in `unreadable_grants` (its owner disconnects or connects again); a consent state that
        cannot be decrypted (its key was removed; it lives ten minutes) is deleted and counted in
        `dropped_states` - that sign-in has to start again."""
        rewritten = 0
        self.unreadable_grants, self.dropped_states = [], 0
        query = "SELECT subject, secret FROM grants WHERE key_id != ?"
        async with self.db.execute(query, (self.cipher.current_key_id,)) as cursor:
            rows = await cursor.fetchall()
        for subject, sealed in rows:
            try:
                plain = self.cipher.decrypt(sealed, table="grants", subject=subject, field="secret")
            except DecryptionFailed:
                self.unreadable_grants.append(subject)
                continue
            await self.db.execute(
                "UPDATE grants SET secret = ?, key_id = ? WHERE subject = ?",
                (self._seal(subject, plain), self.cipher.current_key_id, subject),
            )
            rewritten += 1
        async with self.db.execute("SELECT state_hash, verifier FROM oauth_states") as cursor:
            states = await cursor.fetchall()
        for digest, sealed in states:
            if Cipher.key_id_of(sealed) == self.cipher.current_key_id:
                continue
            try:
                plain = self.cipher.decrypt(sealed, table="oauth_states", subject=digest, field="verifier")
            except DecryptionFailed:
                await self.db.execute("DELETE FROM oauth_states WHERE state_hash = ?", (digest,))
                self.dropped_states += 1
                continue
            resealed = self.cipher.encrypt(plain, table="oauth_states", subject=digest, field="verifier")
            await self.db.execute(
                "UPDATE oauth_states SET verifier = ? WHERE state_hash = ?", (resealed, digest)
            )
            rewritten += 1
        await self.db.commit()
        return rewritten

    # --- elicitations

    def _elicitation(self, row: Iterable[object]) -> Elicitation:
        return Elicitation(*row)  # type: ignore[arg-type]

    async def create_elicitation(self, subject: str, ttl: float, user_id: str = "") -> Elicitation:
        """A pending consent request of `subject`, to be answered by Nextcloud user `user_id`."""
        now = self._clock()
        elicitation = Elicitation(
            secrets.token_urlsafe(24), subject, "pending", now, now + ttl, user_id=user_id
        )
        await self.db.execute(
            "INSERT INTO elicitations (id, subject, status, created_at, expires_at, user_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (elicitation.id, subject, "pending", now, now + ttl, user_id),
        )
        await self.db.commit()
        return elicitation

    async def reusable_elicitation(self, subject: str, user_id: str, until: float) -> Elicitation | None:
        """The newest consent request of `subject` whose link is unopened and good until `until`."""
        query = (
            "SELECT id, subject, status, created_at, expires_at, opened_at, completed_at, error, user_id "
            "FROM elicitations WHERE status = 'pending' AND expires_at > ? AND subject = ? "
            "AND user_id = ? AND opened_at IS NULL ORDER BY created_at DESC LIMIT 1"
        )
        async with self.db.execute(query, (until, subject, user_id)) as cursor:
            row = await cursor.fetchone()
        return self._elicitation(row) if row else None

    async def pending_elicitations(self, subject: str) -> int:
        """How many consent requests of `subject` are still pending (opened or not)."""
        query = (
            "SELECT COUNT(*) FROM elicitations WHERE status = 'pending' AND expires_at > ? AND subject = ?"
        )
        async with self.db.execute(query, (self._clock(), subject)) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def get_elicitation(self, elicitation_id: str) -> Elicitation | None:
        query = (
            "SELECT id, subject, status, created_at, expires_at, opened_at, completed_at, error, user_id "
            "FROM elicitations WHERE id = ?"
        )
        async with self.db.execute(query, (elicitation_id,)) as cursor:
            row = await cursor.fetchone()
        return self._elicitation(row) if row else None

    async def open_elicitation(self, elicitation_id: str) -> Elicitation:
        """Mark a pending, unexpired, never-opened elicitation as opened, atomically."""
        cursor = await self.db.execute(
            "UPDATE elicitations SET opened_at = ? WHERE id = ? AND status = 'pending' "
            "AND opened_at IS NULL AND expires_at > ?",
            (self._clock(), elicitation_id, self._clock()),
        )
        await self.db.commit()
        found = await self.get_elicitation(elicitation_id)
        if cursor.rowcount == 1 and found is not None:
            return found
        raise opening_refused(found)

    async def finish_elicitation(self, elicitation_id: str, status: str, error: str | None = None) -> None:
        await self.db.execute(
            "UPDATE elicitations SET status = ?, completed_at = ?, error = ? "
            "WHERE id = ? AND status = 'pending'",
            (status, self._clock(), error, elicitation_id),
        )
        await self.db.commit()

    # --- OAuth states

    async def create_state(
        self, elicitation_id: str, subject: str, verifier: str, nonce: str, ttl: float
    ) -> str:
        state = secrets.token_urlsafe(32)
        digest = state_hash(state)
        sealed = self.cipher.encrypt(verifier, table="oauth_states", subject=digest, field="verifier")
        await self.db.execute(
            "INSERT INTO oauth_states (state_hash, elicitation_id, subject, verifier, nonce, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (digest, elicitation_id, subject, sealed, nonce, self._clock() + ttl),
        )
        await self.db.commit()
        return state

    async def consume_state(self, state: str) -> ConsentState | None:
        """The state's data if it is known, unexpired and unused - and now used."""
        digest = state_hash(state)
        cursor = await self.db.execute(
            "UPDATE oauth_states SET used_at = ? WHERE state_hash = ? AND used_at IS NULL AND expires_at > ?",
            (self._clock(), digest, self._clock()),
        )
        await self.db.commit()
        if cursor.rowcount != 1:
            return None
        query = "SELECT elicitation_id, subject, verifier, nonce FROM oauth_states WHERE state_hash = ?"
        async with self.db.execute(query, (digest,)) as cursor2:
            row = await cursor2.fetchone()
        assert row is not None
        verifier = self.cipher.decrypt(row[2], table="oauth_states", subject=digest, field="verifier")
        return ConsentState(row[0], row[1], verifier, row[3])

    # --- audit and housekeeping

    async def audit(self, subject: str, event: str, detail: str = "") -> None:
        await self.db.execute(
            "INSERT INTO audit (at, subject, event, detail) VALUES (?, ?, ?, ?)",
            (self._clock(), neutralise(subject[:200]), event, neutralise(detail[:500])),
        )
        await self.db.commit()

    async def audit_events(self, subject: str | None = None, limit: int = 100) -> list[AuditEvent]:
        if subject is None:
            query, args = "SELECT at, subject, event, detail FROM audit ORDER BY id DESC LIMIT ?", (limit,)
        else:
            query = "SELECT at, subject, event, detail FROM audit WHERE subject = ? ORDER BY id DESC LIMIT ?"
            args = (subject, limit)  # type: ignore[assignment]
        async with self.db.execute(query, args) as cursor:
            rows = await cursor.fetchall()
        return [AuditEvent(*row) for row in rows]

    async def expire(self) -> int:
        """Mark overdue pending elicitations expired; drop states that can no longer be used."""
        now = self._clock()
        cursor = await self.db.execute(
            "UPDATE elicitations SET status = 'expired', completed_at = ? "
            "WHERE status = 'pending' AND expires_at <= ?",
            (now, now),
        )
        await self.db.execute("DELETE FROM oauth_states WHERE expires_at <= ? OR used_at IS NOT NULL", (now,))
        await self.db.execute(
            "DELETE FROM elicitations WHERE status != 'pending' AND completed_at < ?", (now - 86400,)
        )
        await self.db.commit()
        return cursor.rowcount
