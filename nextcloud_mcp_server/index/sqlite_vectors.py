"""`find_passages` in the SQLite find index's file (docs/ADR/0078); see `vectors.py`."""

from __future__ import annotations

from collections.abc import Sequence

from nextcloud_mcp_server.index.embedding import Vectors
from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.sqlite import SQLiteIndex, changed, filtered
from nextcloud_mcp_server.index.vectors import PASSAGE_CHARS, Candidate, Pending, Span, vector_bytes

__all__ = ["SQLiteVectors"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS find_passages (
    user TEXT NOT NULL, model TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
    version TEXT NOT NULL, seq INTEGER NOT NULL, start INTEGER NOT NULL, length INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (user, model, kind, key, seq)
);
"""

_CURRENT = "p.user = e.user AND p.model = ? AND p.kind = e.kind AND p.key = e.key AND p.version = e.version"


class SQLiteVectors:
    """Vectors in the same file and connection as the words (`SQLiteIndex`)."""

    def __init__(self, index: SQLiteIndex) -> None:
        self.index = index

    async def open(self) -> None:
        await self.index.db.executescript(SCHEMA)
        await self.index.db.commit()

    async def pending(self, user: str, model: str, limit: int) -> list[Pending]:
        sql = (
            "SELECT e.kind, e.key, e.version, e.title, e.body FROM find_entries AS e "  # noqa: S608 - constants
            f"WHERE e.user = ? AND NOT EXISTS (SELECT 1 FROM find_passages AS p WHERE {_CURRENT}) "
            "ORDER BY e.modified DESC, e.id LIMIT ?"
        )
        async with self.index.db.execute(sql, (user, model, max(1, limit))) as cursor:
            return [
                Pending(str(k), str(y), str(v), str(t), str(b)) for k, y, v, t, b in await cursor.fetchall()
            ]

    async def put(
        self, user: str, model: str, item: Pending, spans: Sequence[Span], vectors: Vectors
    ) -> None:
        db = self.index.db
        await db.execute(
            "DELETE FROM find_passages WHERE user = ? AND model = ? AND kind = ? AND key = ?",
            (user, model, item.kind, item.key),
        )
        await db.executemany(
            "INSERT INTO find_passages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (user, model, item.kind, item.key, item.version, s.seq, s.start, s.length, vector_bytes(v))
                for s, v in zip(spans, vectors, strict=True)
            ],
        )
        await changed(db, user)
        await db.commit()

    async def candidates(self, user: str, model: str, filters: Filters) -> list[Candidate]:
        where: list[str] = ["e.user = ?"]
        args: list[object] = [model, user]
        where += filtered(filters, args)
        passage = f"min(p.length, {PASSAGE_CHARS})"  # the passage alone, as far as an excerpt needs
        sql = (
            f"SELECT e.kind, e.key, e.title, e.location, e.modified, e.version, 0, {passage}, "  # noqa: S608 - constants and placeholders
            f"substr(e.body, p.start + 1, {passage}), p.vector "
            f"FROM find_passages AS p JOIN find_entries AS e ON {_CURRENT} "
            f"WHERE {' AND '.join(where)}"
        )
        async with self.index.db.execute(sql, args) as cursor:
            rows = await cursor.fetchall()
        return [
            Candidate(str(k), str(y), str(t), str(loc), float(m), str(v), int(s), int(n), str(b), bytes(vec))
            for k, y, t, loc, m, v, s, n, b, vec in rows
        ]

    async def counts(self, user: str, model: str) -> tuple[int, int]:
        sql = (
            "SELECT count(*), sum(EXISTS (SELECT 1 FROM find_passages AS p WHERE "  # noqa: S608 - constants
            f"{_CURRENT})) FROM find_entries AS e WHERE e.user = ?"
        )
        async with self.index.db.execute(sql, (model, user)) as cursor:
            row = await cursor.fetchone()
        total, embedded = (row or (0, 0))[:2]
        return int(embedded or 0), int(total or 0)

    async def prune(self, user: str, model: str) -> int:
        cursor = await self.index.db.execute(
            "DELETE FROM find_passages AS p WHERE p.user = ? AND (p.model != ? OR NOT EXISTS ("
            "SELECT 1 FROM find_entries AS e WHERE e.user = p.user AND e.kind = p.kind "
            "AND e.key = p.key AND e.version = p.version))",
            (user, model),
        )
        if cursor.rowcount:
            await changed(self.index.db, user)
        await self.index.db.commit()
        return cursor.rowcount

    async def forget(self, user: str) -> int:
        cursor = await self.index.db.execute("DELETE FROM find_passages WHERE user = ?", (user,))
        await self.index.db.execute("DELETE FROM find_changes WHERE user = ?", (user,))
        await self.index.db.commit()
        return cursor.rowcount

    async def mark(self, user: str) -> str | None:
        async with self.index.db.execute("SELECT mark FROM find_changes WHERE user = ?", (user,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else str(row[0])
