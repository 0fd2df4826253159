"""`find_passages` in the PostgreSQL find index (docs/ADR/0078); see `vectors.py`.

Vectors are `bytea` (float32, little-endian), scored in this process like SQLite's: pgvector is
not among Debian's packages and not on most self-hosters' servers; at a person's volume an exact
score in numpy costs milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

from nextcloud_mcp_server.index.embedding import Vectors
from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.postgres import LOCK, PostgresIndex, filtered
from nextcloud_mcp_server.index.postgres_changes import changed, writing
from nextcloud_mcp_server.index.vectors import PASSAGE_CHARS, Candidate, Pending, Span, vector_bytes

__all__ = ["PostgresVectors"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS find_passages (
    user_key TEXT NOT NULL, model TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
    version TEXT NOT NULL, seq INTEGER NOT NULL, start INTEGER NOT NULL, length INTEGER NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (user_key, model, kind, key, seq)
)
"""

_CURRENT = (
    "p.user_key = e.user_key AND p.model = %s AND p.kind = e.kind AND p.key = e.key AND p.version = e.version"
)


class PostgresVectors:
    """Vectors in the same database and pool as the words (`PostgresIndex`)."""

    def __init__(self, index: PostgresIndex) -> None:
        self.index = index

    async def open(self) -> None:
        async with self.index.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
            await conn.execute(SCHEMA)

    async def pending(self, user: str, model: str, limit: int) -> list[Pending]:
        sql = (
            "SELECT e.kind, e.key, e.version, e.title, e.body FROM find_entries AS e "  # noqa: S608 - constants
            f"WHERE e.user_key = %s AND NOT EXISTS (SELECT 1 FROM find_passages AS p WHERE {_CURRENT}) "
            "ORDER BY e.modified DESC, e.id LIMIT %s"
        )
        async with self.index.pool.connection() as conn:
            rows = await (await conn.execute(sql, (user, model, max(1, limit)))).fetchall()
        return [Pending(str(k), str(y), str(v), str(t), str(b)) for k, y, v, t, b in rows]

    async def put(
        self, user: str, model: str, item: Pending, spans: Sequence[Span], vectors: Vectors
    ) -> None:
        async with self.index.pool.connection() as conn, conn.transaction():
            await writing(conn, user)
            await conn.execute(
                "DELETE FROM find_passages WHERE user_key = %s AND model = %s AND kind = %s AND key = %s",
                (user, model, item.kind, item.key),
            )
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    "INSERT INTO find_passages VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [
                        (
                            user,
                            model,
                            item.kind,
                            item.key,
                            item.version,
                            s.seq,
                            s.start,
                            s.length,
                            vector_bytes(v),
                        )
                        for s, v in zip(spans, vectors, strict=True)
                    ],
                )
            await changed(conn, user)

    async def candidates(self, user: str, model: str, filters: Filters) -> list[Candidate]:
        where: list[str] = ["e.user_key = %s"]
        args: list[object] = [model, user]
        where += filtered(filters, args)
        passage = f"least(p.length, {PASSAGE_CHARS})"  # the passage alone, as far as an excerpt needs
        sql = (
            f"SELECT e.kind, e.key, e.title, e.location, e.modified, e.version, 0, {passage}, "  # noqa: S608 - constants and placeholders
            f"substr(e.body, p.start + 1, {passage}), p.vector "
            f"FROM find_passages AS p JOIN find_entries AS e ON {_CURRENT} "
            f"WHERE {' AND '.join(where)}"
        )
        async with self.index.pool.connection() as conn:
            rows = await (await conn.execute(sql, args)).fetchall()
        return [
            Candidate(
                str(k),
                str(y),
                str(t),
                str(loc),
                float(str(m)),
                str(v),
                int(str(s)),
                int(str(n)),
                str(b),
                bytes(vec),  # type: ignore[call-overload]
            )
            for k, y, t, loc, m, v, s, n, b, vec in rows
        ]

    async def counts(self, user: str, model: str) -> tuple[int, int]:
        sql = (
            "SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM find_passages AS p "  # noqa: S608 - constants
            f"WHERE {_CURRENT})) FROM find_entries AS e WHERE e.user_key = %s"
        )
        async with self.index.pool.connection() as conn:
            row = await (await conn.execute(sql, (model, user))).fetchone()
        total, embedded = (row or (0, 0))[:2]
        return int(str(embedded)), int(str(total))

    async def prune(self, user: str, model: str) -> int:
        async with self.index.pool.connection() as conn, conn.transaction():
            await writing(conn, user)
            cursor = await conn.execute(
                "DELETE FROM find_passages AS p WHERE p.user_key = %s AND (p.model != %s OR NOT EXISTS ("
                "SELECT 1 FROM find_entries AS e WHERE e.user_key = p.user_key AND e.kind = p.kind "
                "AND e.key = p.key AND e.version = p.version))",
                (user, model),
            )
            if cursor.rowcount:
                await changed(conn, user)
            return cursor.rowcount

    async def forget(self, user: str) -> int:
        async with self.index.pool.connection() as conn, conn.transaction():
            await writing(conn, user)
            cursor = await conn.execute("DELETE FROM find_passages WHERE user_key = %s", (user,))
            await conn.execute("DELETE FROM find_changes WHERE user_key = %s", (user,))
            return cursor.rowcount

    async def mark(self, user: str) -> str | None:
        async with self.index.pool.connection() as conn:
            row = await (
                await conn.execute("SELECT mark FROM find_changes WHERE user_key = %s", (user,))
            ).fetchone()
        return None if row is None else str(row[0])
