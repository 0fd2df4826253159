"""The consent store: grants (encrypted), elicitations, OAuth states, audit trail - written once,
over an engine (`engines.py`: an SQLite file; `postgres.py`: PostgreSQL for several replicas).

`Store` is the interface the rest of the server uses; `ConsentStore` implements it on either
engine (schema versions, forward migrations), `SQLiteStore` and `PostgresStore` choose the engine.

Guarantees the callers rely on:
- secrets are only ever written encrypted (`Cipher`), bound to table, subject and field;
- a consent `state` is usable once (`consume_state` is one atomic UPDATE);
- an elicitation link is opened once, while pending and unexpired (`open_elicitation`);
- a grant's secret is replaced only if nobody replaced it meanwhile (`replace_secret` is a
  compare-and-swap on the grant's version), so a rotated refresh token is never lost.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

import aiosqlite

from nextcloud_mcp_server.logs import neutralise
from nextcloud_mcp_server.storage.access_tokens import SharedTokens
from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.engines import Engine, SQLiteEngine
from nextcloud_mcp_server.storage.find_consent import FindConsents
from nextcloud_mcp_server.storage.hooks import grant_deleted
from nextcloud_mcp_server.storage.key_rotation import rotate_keys
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
    "CONSENT_CHANNEL",
    "AuditEvent",
    "ConsentError",
    "ConsentState",
    "ConsentStore",
    "Elicitation",
    "Grant",
    "SQLiteStore",
    "Store",
    "StoreError",
]


class Store(Protocol):
    access_tokens: SharedTokens  # the Nextcloud access token every replica shares
    find_consents: FindConsents  # each person's answer to indexing their Nextcloud (ADR 0084)

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


CONSENT_CHANNEL = "nextcloud_mcp_consent"  # completions announced to the other replicas
_MIGRATION_LOCK = 0x6E634D4350  # "ncMCP": PostgreSQL's advisory lock for these migrations


class ConsentStore:
    """The store on an engine. Open with `await store.open()`; close with `close()`."""

    def __init__(self, engine: Engine, cipher: Cipher, *, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.cipher = cipher
        self._clock = clock
        self.unreadable_grants: list[str] = []  # found by the last rotate_keys()
        self.dropped_states = 0
        self.grant_deleted: list[Callable[[str], Awaitable[object]]] = []
        self.access_tokens = SharedTokens(lambda: self.conn, cipher)
        self.find_consents = FindConsents(lambda: self.conn, cipher)

    def __str__(self) -> str:
        return str(self.engine)

    @property
    def conn(self) -> Connection:
        return self.engine.connection

    async def open(self) -> None:
        await self.engine.open()

        def too_new(current: int) -> StoreError:
            return StoreError(
                f"the store at {self} has schema version {current}, newer than this server "
                f"understands ({len(MIGRATIONS)}); upgrade the server"
            )

        try:
            await self.engine.migrate("schema_version", MIGRATIONS, too_new, lock=_MIGRATION_LOCK)
            await self._check_keys()
        except StoreError:
            await self.close()
            raise
        except self.engine.errors as exc:
            await self.close()
            raise StoreError(f"cannot use the store at {self}: {exc}") from None
        except BaseException:
            await self.close()  # connections must not outlive a failed open
            raise

    async def ping(self) -> None:
        """A trivial query: raises when the store cannot be read."""
        await self.engine.ping()

    async def close(self) -> None:
        await self.engine.close()

    async def _check_keys(self) -> None:
        """Refuse to start when the configured keys cannot read what is stored (nothing is
        changed or deleted: adding the missing key back makes everything readable again)."""
        async with self.conn.execute("SELECT DISTINCT key_id FROM grants") as cursor:
            stored = {str(row[0]) for row in await cursor.fetchall()}
        unknown = stored - set(self.cipher.key_ids)
        if unknown:
            raise StoreError(
                f"stored grants are encrypted with key(s) {', '.join(sorted(unknown))}, which "
                "TOKEN_ENCRYPTION_KEY does not contain; configure them (the current key first)"
            )

    async def _one(self, sql: str, parameters: Iterable[object]) -> Any:
        async with self.conn.execute(sql, parameters) as cursor:
            return await cursor.fetchone()

    async def _all(self, sql: str, parameters: Iterable[object]) -> list[Any]:
        async with self.conn.execute(sql, parameters) as cursor:
            return list(await cursor.fetchall())

    async def _write(self, sql: str, parameters: Iterable[object]) -> int:
        """One statement that changes rows, committed; how many it changed."""
        cursor = await self.conn.execute(sql, parameters)
        await self.conn.commit()
        return int(cursor.rowcount)

    # --- grants

    def _seal(self, subject: str, secret: str) -> str:
        return self.cipher.encrypt(secret, table="grants", subject=subject, field="secret")

    async def get_grant(self, subject: str) -> Grant | None:
        row = await self._one(f"SELECT {GRANT_COLUMNS} FROM grants WHERE subject = ?", (subject,))  # noqa: S608
        return None if row is None else grant_from_row(row, self.cipher)

    async def save_grant(self, grant: Grant) -> None:
        now = self._clock()
        await self._write(
            "INSERT INTO grants (subject, user_id, provider, kind, secret, key_id, scopes, created_at, "
            "updated_at, login) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(subject) DO UPDATE SET user_id=excluded.user_id, "
            "provider=excluded.provider, kind=excluded.kind, secret=excluded.secret, key_id=excluded.key_id, "
            "scopes=excluded.scopes, created_at=excluded.created_at, updated_at=excluded.updated_at, "
            "login=excluded.login, version=grants.version + 1",
            (grant.subject, grant.user_id, grant.provider, grant.kind,
             self._seal(grant.subject, grant.secret), self.cipher.current_key_id, grant.scopes, now, now,
             grant.login),
        )  # fmt: skip

    async def replace_secret(self, subject: str, expected_version: int, secret: str) -> bool:
        changed = await self._write(
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
        return changed == 1

    async def delete_grant(self, subject: str) -> bool:
        """The grant and the access token minted from it, then the hooks (each time: retries a failed one)."""
        async with self.engine.transaction() as tx:
            await tx.execute("DELETE FROM access_tokens WHERE subject = ?", (subject,))
            gone = await tx.execute("DELETE FROM grants WHERE subject = ?", (subject,))
            deleted = int(gone.rowcount) == 1
        return await grant_deleted(self.grant_deleted, subject, deleted)

    async def grant_subjects(self, prefix: str, limit: int = 1000) -> list[str]:
        """Subjects of stored grants that start with `prefix` (housekeeping), at most `limit`."""
        query = "SELECT subject FROM grants WHERE substr(subject, 1, ?) = ? ORDER BY subject LIMIT ?"
        return [str(row[0]) for row in await self._all(query, (len(prefix), prefix, limit))]

    def refresh_lock(self, subject: str) -> AbstractAsyncContextManager[None]:
        """Held by one replica at a time while it refreshes `subject`'s credential."""
        return self.engine.refresh_lock(subject)

    async def announce_completion(self, elicitation_id: str) -> None:
        """Tell every replica that `elicitation_id` ended (the one holding its session notifies it)."""
        await self.engine.announce(CONSENT_CHANNEL, elicitation_id)

    def listen_completions(self, handler: Callable[[str], Awaitable[object]]) -> None:
        """Call `handler(elicitation_id)` for every completion any replica announces, until closed."""
        self.engine.listen(CONSENT_CHANNEL, handler)

    async def rotate_keys(self) -> int:
        """Re-encrypt every secret under the current key (`key_rotation.rotate_keys`)."""
        rewritten, self.unreadable_grants, self.dropped_states = await rotate_keys(self.engine, self.cipher)
        return rewritten

    # --- elicitations

    async def create_elicitation(self, subject: str, ttl: float, user_id: str = "") -> Elicitation:
        """A pending consent request of `subject`, to be answered by Nextcloud user `user_id`."""
        now = self._clock()
        elicitation = Elicitation(
            secrets.token_urlsafe(24), subject, "pending", now, now + ttl, user_id=user_id
        )
        await self._write(
            "INSERT INTO elicitations (id, subject, status, created_at, expires_at, user_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (elicitation.id, subject, "pending", now, now + ttl, user_id),
        )
        return elicitation

    async def reusable_elicitation(self, subject: str, user_id: str, until: float) -> Elicitation | None:
        """The newest consent request of `subject` whose link is unopened and good until `until`."""
        row = await self._one(
            f"SELECT {_ELICITATION} FROM elicitations WHERE status = 'pending' AND expires_at > ? "  # noqa: S608
            "AND subject = ? AND user_id = ? AND opened_at IS NULL ORDER BY created_at DESC LIMIT 1",
            (until, subject, user_id),
        )
        return Elicitation(*row) if row else None

    async def pending_elicitations(self, subject: str) -> int:
        """How many consent requests of `subject` are still pending (opened or not)."""
        row = await self._one(
            "SELECT COUNT(*) FROM elicitations WHERE status = 'pending' AND expires_at > ? AND subject = ?",
            (self._clock(), subject),
        )
        return int(row[0]) if row else 0

    async def get_elicitation(self, elicitation_id: str) -> Elicitation | None:
        row = await self._one(f"SELECT {_ELICITATION} FROM elicitations WHERE id = ?", (elicitation_id,))  # noqa: S608
        return Elicitation(*row) if row else None

    async def open_elicitation(self, elicitation_id: str) -> Elicitation:
        """Mark a pending, unexpired, never-opened elicitation as opened, atomically."""
        now = self._clock()
        row = await self._one(
            "UPDATE elicitations SET opened_at = ? WHERE id = ? AND status = 'pending' "  # noqa: S608
            f"AND opened_at IS NULL AND expires_at > ? RETURNING {_ELICITATION}",
            (now, elicitation_id, now),
        )
        await self.conn.commit()
        if row is not None:
            return Elicitation(*row)
        raise opening_refused(await self.get_elicitation(elicitation_id))

    async def finish_elicitation(self, elicitation_id: str, status: str, error: str | None = None) -> None:
        await self._write(
            "UPDATE elicitations SET status = ?, completed_at = ?, error = ? "
            "WHERE id = ? AND status = 'pending'",
            (status, self._clock(), error, elicitation_id),
        )

    # --- OAuth states

    async def create_state(
        self, elicitation_id: str, subject: str, verifier: str, nonce: str, ttl: float
    ) -> str:
        state = secrets.token_urlsafe(32)
        digest = state_hash(state)
        sealed = self.cipher.encrypt(verifier, table="oauth_states", subject=digest, field="verifier")
        await self._write(
            "INSERT INTO oauth_states (state_hash, elicitation_id, subject, verifier, nonce, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (digest, elicitation_id, subject, sealed, nonce, self._clock() + ttl),
        )
        return state

    async def consume_state(self, state: str) -> ConsentState | None:
        """The state's data if it is known, unexpired and unused - and now used (one statement)."""
        digest = state_hash(state)
        now = self._clock()
        row = await self._one(
            "UPDATE oauth_states SET used_at = ? WHERE state_hash = ? AND used_at IS NULL "
            "AND expires_at > ? RETURNING elicitation_id, subject, verifier, nonce",
            (now, digest, now),
        )
        await self.conn.commit()
        if row is None:
            return None
        verifier = self.cipher.decrypt(str(row[2]), table="oauth_states", subject=digest, field="verifier")
        return ConsentState(str(row[0]), str(row[1]), verifier, str(row[3]))

    # --- audit and housekeeping

    async def audit(self, subject: str, event: str, detail: str = "") -> None:
        await self._write(
            "INSERT INTO audit (at, subject, event, detail) VALUES (?, ?, ?, ?)",
            (self._clock(), neutralise(subject[:200]), event, neutralise(detail[:500])),
        )

    async def audit_events(self, subject: str | None = None, limit: int = 100) -> list[AuditEvent]:
        if subject is None:
            rows = await self._all(
                "SELECT at, subject, event, detail FROM audit ORDER BY id DESC LIMIT ?", (limit,)
            )
        else:
            rows = await self._all(
                "SELECT at, subject, event, detail FROM audit WHERE subject = ? ORDER BY id DESC LIMIT ?",
                (subject, limit),
            )
        return [AuditEvent(*row) for row in rows]

    async def expire(self) -> int:
        """Mark overdue pending elicitations expired; drop states that can no longer be used."""
        now = self._clock()
        async with self.engine.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE elicitations SET status = 'expired', completed_at = ? "
                "WHERE status = 'pending' AND expires_at <= ?",
                (now, now),
            )
            expired = int(cursor.rowcount)
            await tx.execute("DELETE FROM oauth_states WHERE expires_at <= ? OR used_at IS NOT NULL", (now,))
            await tx.execute(
                "DELETE FROM elicitations WHERE status != 'pending' AND completed_at < ?", (now - 86400,)
            )
        return expired


_ELICITATION = "id, subject, status, created_at, expires_at, opened_at, completed_at, error, user_id"


class SQLiteStore(ConsentStore):
    """The store on one SQLite file (WAL)."""

    def __init__(self, path: Path, cipher: Cipher, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(SQLiteEngine(path), cipher, clock=clock)
        self.path = path

    @property
    def db(self) -> aiosqlite.Connection:
        assert isinstance(self.engine, SQLiteEngine)
        return self.engine.db
