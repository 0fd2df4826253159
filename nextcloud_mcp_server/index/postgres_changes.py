"""A user's change mark in the PostgreSQL find index (docs/ADR/0095), and the lock their writes take.

Every write of a user's items or passages takes the user's write lock first and sets a new mark
in the same transaction; a process that keeps the user's passages in memory reads the mark (one
small row) and reads the passages again when it moved, whichever replica wrote.
"""

from __future__ import annotations

import hashlib
import secrets

import psycopg

__all__ = ["changed", "writing"]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


async def writing(conn: Conn, user: str) -> None:
    """Inside a transaction: wait for the user's other writes (any replica) to end. A write takes
    this first, so the user's writes never deadlock on each other's rows and their change mark
    moves with their rows (docs/ADR/0095)."""
    digest = hashlib.sha256(b"nextcloud-mcp-find-write:" + user.encode("utf-8", "replace")).digest()
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (int.from_bytes(digest[:8], "big", signed=True),))


async def changed(conn: Conn, user: str) -> None:
    """A new change mark for `user`, in the transaction that changes their items or passages:
    what a replica keeps of them in memory is read again (docs/ADR/0095)."""
    await conn.execute(
        "INSERT INTO find_changes VALUES (%s, %s) ON CONFLICT (user_key) DO UPDATE SET mark = excluded.mark",
        (user, secrets.token_hex(8)),
    )
