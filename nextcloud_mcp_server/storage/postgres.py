"""The consent store on PostgreSQL, for several replicas sharing one database (STORE_URL).

Same interface, encryption and guarantees as `SQLiteStore` (`store.py`); the schema comes from the
same `MIGRATIONS` (`records.py`), written for SQLite and adapted here (`postgres_sql`). What
PostgreSQL adds for replicas:
- migrations run under an advisory lock, so replicas starting together migrate once;
- `refresh_lock(subject)`: a session-level advisory lock held while one replica refreshes a user's
  token, so two replicas never spend the same refresh token (single-flight across replicas);
- `announce_completion` / `listen_completions`: LISTEN/NOTIFY, so the replica that finished a
  consent can tell the replica holding the MCP session that asked.

Lock connections come from their own small pool: a replica waiting for a lock never holds a
connection that the lock's holder needs for its queries (no deadlock when many users refresh).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import psycopg

from nextcloud_mcp_server.logs import neutralise
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed
from nextcloud_mcp_server.storage.pg_pool import ConnectionPool
from nextcloud_mcp_server.storage.records import (
    GRANT_COLUMNS,
    MIGRATIONS,
    AuditEvent,
    ConsentState,
    Elicitation,
    Grant,
    StoreError,
    grant_from_row,
    opening_refused,
    state_hash,
)

__all__ = ["CONSENT_CHANNEL", "PostgresStore", "migrate", "postgres_sql", "redacted_url"]

logger = logging.getLogger(__name__)

CONSENT_CHANNEL = "nextcloud_mcp_consent"
_MIGRATION_LOCK = 0x6E634D4350  # "ncMCP": one advisory lock id for schema migrations


def postgres_sql(statement: str) -> str:
    """A migration written for SQLite, in PostgreSQL's words: 8-byte floats for timestamps (a
    PostgreSQL REAL has 4 bytes: seconds would be lost) and an identity column for AUTOINCREMENT."""
    statement = statement.replace(
        "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    )
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


def redacted_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


async def migrate(
    pool: ConnectionPool,
    lock: int,
    version_table: str,
    migrations: list[str],
    too_new: Callable[[int], Exception],
) -> None:
    """Bring tables to the newest of `migrations` (SQLite statements, adapted by `postgres_sql`),
    in one transaction under the advisory lock `lock`: replicas starting together migrate once,
    the others wait and find it done. `version_table` holds the version reached; a version newer
    than `migrations` raises `too_new(version)` and changes nothing."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {version_table} (version INTEGER NOT NULL)")
        row = await (await conn.execute(f"SELECT version FROM {version_table}")).fetchone()  # noqa: S608
        current = int(row[0]) if row else 0  # type: ignore[call-overload]
        if current > len(migrations):
            raise too_new(current)
        for version in range(current + 1, len(migrations) + 1):
            for statement in filter(str.strip, migrations[version - 1].split(";")):
                await conn.execute(postgres_sql(statement))
        if current < len(migrations):
            await conn.execute(f"DELETE FROM {version_table}")  # noqa: S608
            await conn.execute(f"INSERT INTO {version_table} VALUES (%s)", (len(migrations),))  # noqa: S608


def _lock_key(subject: str) -> int:
    """A signed 64-bit advisory lock id for refreshing `subject`'s grant."""
    digest = hashlib.sha256(b"nextcloud-mcp-refresh:" + subject.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresStore:
    """Open with `await store.open()`; close with `close()`."""

    def __init__(
        self,
        url: str,
        cipher: Cipher,
        *,
        clock: Callable[[], float] = time.time,
        pool_size: int = 10,
        lock_pool_size: int = 8,
        lock_timeout_seconds: int = 60,
    ) -> None:
        self.url = url
        self.cipher = cipher
        self._clock = clock
        self._sizes = (pool_size, lock_pool_size)
        # A lock wait gives up after lock_timeout (a stuck holder must not block a user forever).
        self._lock_setup = [f"SET lock_timeout = '{int(lock_timeout_seconds)}s'"]
        self._pools: tuple[ConnectionPool, ConnectionPool] | None = None
        self._listener: asyncio.Task[None] | None = None
        self.unreadable_grants: list[str] = []  # found by the last rotate_keys()
        self.dropped_states = 0

    @property
    def _pool(self) -> ConnectionPool:
        if self._pools is None:
            raise StoreError("the store is not open")
        return self._pools[0]

    @property
    def pool(self) -> ConnectionPool:
        """The query pool, shared with the authorization server's tables (`authz/connection.py`)."""
        return self._pool

    @property
    def _lock_pool(self) -> ConnectionPool:
        if self._pools is None:
            raise StoreError("the store is not open")
        return self._pools[1]

    def __str__(self) -> str:
        return redacted_url(self.url)

    async def open(self) -> None:
        """Connect (pools are made here, in the running event loop) and migrate."""
        self._pools = (
            ConnectionPool(self.url, self._sizes[0]),
            ConnectionPool(self.url, self._sizes[1], setup=self._lock_setup),
        )
        try:
            await self._migrate()
            await self._check_keys()
        except psycopg.Error as exc:
            await self.close()
            raise StoreError(f"cannot use the store at {self}: {exc}") from None
        except BaseException:
            await self.close()
            raise

    async def ping(self) -> None:
        async with self._pool.connection() as conn:
            await conn.execute("SELECT 1 FROM schema_version")

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._pools is not None:
            pools, self._pools = self._pools, None
            for pool in pools:
                await pool.close()

    async def _migrate(self) -> None:
        def too_new(current: int) -> StoreError:
            return StoreError(
                f"the store at {self} has schema version {current}, newer than this server "
                f"understands ({len(MIGRATIONS)}); upgrade the server"
            )

        await migrate(self._pool, _MIGRATION_LOCK, "schema_version", MIGRATIONS, too_new)

    async def _check_keys(self) -> None:
        async with self._pool.connection() as conn:
            rows = await (await conn.execute("SELECT DISTINCT key_id FROM grants")).fetchall()
        unknown = {str(row[0]) for row in rows} - set(self.cipher.key_ids)
        if unknown:
            raise StoreError(
                f"stored grants are encrypted with key(s) {', '.join(sorted(unknown))}, which "
                "TOKEN_ENCRYPTION_KEY does not contain; configure them (the current key first)"
            )

    async def _run(self, query: str, args: tuple[object, ...] = ()) -> int:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(query, args)
            return cursor.rowcount

    async def _one(self, query: str, args: tuple[object, ...]) -> tuple[object, ...] | None:
        async with self._pool.connection() as conn:
            return await (await conn.execute(query, args)).fetchone()

    async def _all(self, query: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        async with self._pool.connection() as conn:
            return await (await conn.execute(query, args)).fetchall()

    # --- grants

    def _seal(self, subject: str, secret: str) -> str:
        return self.cipher.encrypt(secret, table="grants", subject=subject, field="secret")

    async def get_grant(self, subject: str) -> Grant | None:
        row = await self._one(f"SELECT {GRANT_COLUMNS} FROM grants WHERE subject = %s", (subject,))  # noqa: S608
        return None if row is None else grant_from_row(row, self.cipher)

    async def save_grant(self, grant: Grant) -> None:
        now = self._clock()
        await self._run(
            "INSERT INTO grants (subject, user_id, provider, kind, secret, key_id, scopes, created_at, "
            "updated_at, login) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (subject) DO UPDATE SET user_id=excluded.user_id, "
            "provider=excluded.provider, kind=excluded.kind, secret=excluded.secret, key_id=excluded.key_id, "
            "scopes=excluded.scopes, created_at=excluded.created_at, updated_at=excluded.updated_at, "
            "login=excluded.login, version=grants.version + 1",
            (grant.subject, grant.user_id, grant.provider, grant.kind,
             self._seal(grant.subject, grant.secret), self.cipher.current_key_id, grant.scopes, now, now,
             grant.login),
        )  # fmt: skip

    async def replace_secret(self, subject: str, expected_version: int, secret: str) -> bool:
        changed = await self._run(
            "UPDATE grants SET secret = %s, key_id = %s, updated_at = %s, version = version + 1 "
            "WHERE subject = %s AND version = %s",
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
        return await self._run("DELETE FROM grants WHERE subject = %s", (subject,)) == 1

    async def grant_subjects(self, prefix: str, limit: int = 1000) -> list[str]:
        query = "SELECT subject FROM grants WHERE left(subject, %s) = %s ORDER BY subject LIMIT %s"
        return [str(row[0]) for row in await self._all(query, (len(prefix), prefix, limit))]

    @contextlib.asynccontextmanager
    async def refresh_lock(self, subject: str) -> AsyncIterator[None]:
        """Held by one replica at a time while it refreshes `subject`'s credential."""
        key = _lock_key(subject)
        try:
            async with self._lock_pool.connection() as conn:
                await conn.execute("SELECT pg_advisory_lock(%s)", (key,))
                yield
                # Released with the statement, or (if the connection broke) by the server itself;
                # a connection that fails here is closed by the pool rather than reused.
                await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except psycopg.errors.LockNotAvailable:
            raise StoreError("another replica has been refreshing this user's token for too long") from None

    async def rotate_keys(self) -> int:
        """Re-encrypt every secret under the current key, in one transaction. As in `SQLiteStore`,
        an unreadable grant is left and named in `unreadable_grants`; an unreadable consent state
        is deleted and counted in `dropped_states`."""
        rewritten = 0
        self.unreadable_grants, self.dropped_states = [], 0
        current = self.cipher.current_key_id
        async with self._pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "SELECT subject, secret FROM grants WHERE key_id != %s FOR UPDATE", (current,)
            )
            for subject, sealed in await cursor.fetchall():
                try:
                    plain = self.cipher.decrypt(
                        str(sealed), table="grants", subject=str(subject), field="secret"
                    )
                except DecryptionFailed:
                    self.unreadable_grants.append(str(subject))
                    continue
                await conn.execute(
                    "UPDATE grants SET secret = %s, key_id = %s WHERE subject = %s",
                    (self._seal(str(subject), plain), current, subject),
                )
                rewritten += 1
            cursor = await conn.execute("SELECT state_hash, verifier FROM oauth_states FOR UPDATE")
            for digest, sealed in await cursor.fetchall():
                if Cipher.key_id_of(str(sealed)) == current:
                    continue
                where = {"table": "oauth_states", "subject": str(digest), "field": "verifier"}
                try:
                    plain = self.cipher.decrypt(str(sealed), **where)
                except DecryptionFailed:
                    await conn.execute("DELETE FROM oauth_states WHERE state_hash = %s", (digest,))
                    self.dropped_states += 1
                    continue
                resealed = self.cipher.encrypt(plain, **where)
                await conn.execute(
                    "UPDATE oauth_states SET verifier = %s WHERE state_hash = %s", (resealed, digest)
                )
                rewritten += 1
        return rewritten

    # --- elicitations

    async def create_elicitation(self, subject: str, ttl: float, user_id: str = "") -> Elicitation:
        now = self._clock()
        elicitation = Elicitation(
            secrets.token_urlsafe(24), subject, "pending", now, now + ttl, user_id=user_id
        )
        await self._run(
            "INSERT INTO elicitations (id, subject, status, created_at, expires_at, user_id) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (elicitation.id, subject, "pending", now, now + ttl, user_id),
        )
        return elicitation

    async def reusable_elicitation(self, subject: str, user_id: str, until: float) -> Elicitation | None:
        """The newest consent request of `subject` whose link is unopened and good until `until`."""
        row = await self._one(
            "SELECT id, subject, status, created_at, expires_at, opened_at, completed_at, error, user_id "
            "FROM elicitations WHERE status = 'pending' AND expires_at > %s AND subject = %s "
            "AND user_id = %s AND opened_at IS NULL ORDER BY created_at DESC LIMIT 1",
            (until, subject, user_id),
        )
        return Elicitation(*row) if row else None  # type: ignore[arg-type]

    async def pending_elicitations(self, subject: str) -> int:
        """How many consent requests of `subject` are still pending (opened or not)."""
        row = await self._one(
            "SELECT COUNT(*) FROM elicitations WHERE status = 'pending' AND expires_at > %s AND subject = %s",
            (self._clock(), subject),
        )
        return int(row[0]) if row else 0  # type: ignore[call-overload]

    async def get_elicitation(self, elicitation_id: str) -> Elicitation | None:
        row = await self._one(
            "SELECT id, subject, status, created_at, expires_at, opened_at, completed_at, error, user_id "
            "FROM elicitations WHERE id = %s",
            (elicitation_id,),
        )
        return Elicitation(*row) if row else None  # type: ignore[arg-type]

    async def open_elicitation(self, elicitation_id: str) -> Elicitation:
        now = self._clock()
        row = await self._one(
            "UPDATE elicitations SET opened_at = %s WHERE id = %s AND status = 'pending' "
            "AND opened_at IS NULL AND expires_at > %s RETURNING id, subject, status, created_at, "
            "expires_at, opened_at, completed_at, error, user_id",
            (now, elicitation_id, now),
        )
        if row is not None:
            return Elicitation(*row)  # type: ignore[arg-type]
        found = await self.get_elicitation(elicitation_id)
        raise opening_refused(found)

    async def finish_elicitation(self, elicitation_id: str, status: str, error: str | None = None) -> None:
        await self._run(
            "UPDATE elicitations SET status = %s, completed_at = %s, error = %s "
            "WHERE id = %s AND status = 'pending'",
            (status, self._clock(), error, elicitation_id),
        )

    # --- OAuth states

    async def create_state(
        self, elicitation_id: str, subject: str, verifier: str, nonce: str, ttl: float
    ) -> str:
        state = secrets.token_urlsafe(32)
        digest = state_hash(state)
        sealed = self.cipher.encrypt(verifier, table="oauth_states", subject=digest, field="verifier")
        await self._run(
            "INSERT INTO oauth_states (state_hash, elicitation_id, subject, verifier, nonce, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (digest, elicitation_id, subject, sealed, nonce, self._clock() + ttl),
        )
        return state

    async def consume_state(self, state: str) -> ConsentState | None:
        digest = state_hash(state)
        now = self._clock()
        row = await self._one(
            "UPDATE oauth_states SET used_at = %s WHERE state_hash = %s AND used_at IS NULL "
            "AND expires_at > %s RETURNING elicitation_id, subject, verifier, nonce",
            (now, digest, now),
        )
        if row is None:
            return None
        verifier = self.cipher.decrypt(str(row[2]), table="oauth_states", subject=digest, field="verifier")
        return ConsentState(str(row[0]), str(row[1]), verifier, str(row[3]))

    # --- audit and housekeeping

    async def audit(self, subject: str, event: str, detail: str = "") -> None:
        await self._run(
            "INSERT INTO audit (at, subject, event, detail) VALUES (%s, %s, %s, %s)",
            (self._clock(), neutralise(subject[:200]), event, neutralise(detail[:500])),
        )

    async def audit_events(self, subject: str | None = None, limit: int = 100) -> list[AuditEvent]:
        if subject is None:
            rows = await self._all(
                "SELECT at, subject, event, detail FROM audit ORDER BY id DESC LIMIT %s", (limit,)
            )
        else:
            rows = await self._all(
                "SELECT at, subject, event, detail FROM audit WHERE subject = %s ORDER BY id DESC LIMIT %s",
                (subject, limit),
            )
        return [AuditEvent(*row) for row in rows]  # type: ignore[arg-type]

    async def expire(self) -> int:
        now = self._clock()
        async with self._pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "UPDATE elicitations SET status = 'expired', completed_at = %s "
                "WHERE status = 'pending' AND expires_at <= %s",
                (now, now),
            )
            expired = cursor.rowcount
            await conn.execute(
                "DELETE FROM oauth_states WHERE expires_at <= %s OR used_at IS NOT NULL", (now,)
            )
            await conn.execute(
                "DELETE FROM elicitations WHERE status != 'pending' AND completed_at < %s", (now - 86400,)
            )
        return expired

    # --- consent completion across replicas

    async def announce_completion(self, elicitation_id: str) -> None:
        """Tell every replica that `elicitation_id` ended (the one holding its session notifies it)."""
        await self._run("SELECT pg_notify(%s, %s)", (CONSENT_CHANNEL, elicitation_id[:200]))

    def listen_completions(self, handler: Callable[[str], Awaitable[object]]) -> None:
        """Call `handler(elicitation_id)` for every completion any replica announces, until closed."""
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(handler), name="consent-completions")

    async def _listen(self, handler: Callable[[str], Awaitable[object]]) -> None:
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
                async with conn:
                    await conn.execute(f"LISTEN {CONSENT_CHANNEL}")
                    async for notice in conn.notifies():
                        try:
                            await handler(notice.payload)
                        except Exception:
                            logger.exception("handling a consent completion failed")
            except psycopg.Error as exc:
                # A completion announced while we reconnect is missed; the client's own retry
                # still works (and its session gets no notification it was never promised twice).
                logger.warning("listening for consent completions failed (%s); reconnecting", exc)
                await asyncio.sleep(1.0)
