"""The find index in an SQLite file of its own, with FTS5 (docs/ADR/0071).

`find_entries` holds each item and its text; `find_text` is an external-content FTS5 table over
it (kept in step by triggers), tokenized by `unicode61 remove_diacritics 2` with prefix indexes.
Its first column holds the owner's tag (`engine.owner_tag`), which every match expression
requires: the engine reads only that user's postings, and the row's user key is compared again.
The file is created with mode 0600; deleted text is overwritten (`secure_delete`) and a user's
forgotten tokens are merged out of the FTS5 segments at once.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Collection, Sequence
from pathlib import Path

import aiosqlite

from nextcloud_mcp_server.index.engine import (
    END_MARK,
    START_MARK,
    Filters,
    Hit,
    IndexError_,
    Item,
    Status,
    bounded,
    clean_text,
    folder_bounds,
    owner_tag,
)
from nextcloud_mcp_server.index.query import Query, Term

__all__ = ["SQLiteIndex", "changed", "filtered", "match_expression"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS find_entries (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    title TEXT NOT NULL,
    location TEXT NOT NULL,
    modified REAL NOT NULL,
    version TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (user, kind, key)
);
CREATE INDEX IF NOT EXISTS find_entries_place ON find_entries (user, kind, location);
CREATE VIRTUAL TABLE IF NOT EXISTS find_text USING fts5(
    owner, title, location, body,
    content='find_entries', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2', prefix='2 3'
);
CREATE TRIGGER IF NOT EXISTS find_entries_added AFTER INSERT ON find_entries BEGIN
    INSERT INTO find_text (rowid, owner, title, location, body)
    VALUES (new.id, new.owner, new.title, new.location, new.body);
END;
CREATE TRIGGER IF NOT EXISTS find_entries_removed AFTER DELETE ON find_entries BEGIN
    INSERT INTO find_text (find_text, rowid, owner, title, location, body)
    VALUES ('delete', old.id, old.owner, old.title, old.location, old.body);
END;
CREATE TRIGGER IF NOT EXISTS find_entries_changed AFTER UPDATE ON find_entries BEGIN
    INSERT INTO find_text (find_text, rowid, owner, title, location, body)
    VALUES ('delete', old.id, old.owner, old.title, old.location, old.body);
    INSERT INTO find_text (rowid, owner, title, location, body)
    VALUES (new.id, new.owner, new.title, new.location, new.body);
END;
CREATE TABLE IF NOT EXISTS find_marks (
    user TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL,
    PRIMARY KEY (user, source, key)
);
CREATE TABLE IF NOT EXISTS find_users (
    user TEXT PRIMARY KEY, synced_at REAL, complete INTEGER NOT NULL, error TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS find_changes (user TEXT PRIMARY KEY, mark TEXT NOT NULL);
INSERT OR IGNORE INTO find_changes
    SELECT user, lower(hex(randomblob(8))) FROM (SELECT DISTINCT user FROM find_entries);
"""

_UPSERT = (
    "INSERT INTO find_entries (user, owner, kind, key, title, location, modified, version, body) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user, kind, key) DO UPDATE SET "
    "title = excluded.title, location = excluded.location, modified = excluded.modified, "
    "version = excluded.version, body = excluded.body"
)


async def changed(db: aiosqlite.Connection, user: str) -> None:
    """A new change mark for `user`, in the transaction that changes their items or passages
    (docs/ADR/0095: what a process keeps of them in memory is read again)."""
    await db.execute(
        "INSERT INTO find_changes VALUES (?, ?) ON CONFLICT (user) DO UPDATE SET mark = excluded.mark",
        (user, secrets.token_hex(8)),
    )


def _quoted(term: Term) -> str:
    # Words are letters and digits only (query.py): nothing inside the quotes is syntax.
    phrase = '"' + " ".join(term.words) + '"'
    return phrase + "*" if term.prefix else phrase


def match_expression(user: str, query: Query) -> str:
    """The FTS5 expression: the owner's tag, every wanted term, none of the unwanted ones."""
    wanted = " AND ".join(_quoted(t) for t in query.wanted)
    expression = f'(owner : "{owner_tag(user)}" AND {{title location body}} : ({wanted}))'
    for term in query.unwanted:
        expression += f" NOT {{title location body}} : ({_quoted(term)})"
    return expression


def _at_or_below(table: str = "") -> str:
    """The condition on a location at a folder or below it (`table`: "e." or ""), whose values
    are `folder_bounds` (`substr`, as PostgreSQL's `left`)."""
    return f"({table}location = ? OR substr({table}location, 1, ?) = ?)"


def filtered(filters: Filters, args: list[object]) -> list[str]:
    """The conditions on `find_entries AS e` that `filters` asks for (kinds, folder and below,
    changed after/before), their values appended to `args`: one reading for words and meaning."""
    where: list[str] = []
    if filters.kinds is not None:
        where.append(f"e.kind IN ({','.join('?' * len(filters.kinds))})")
        args += sorted(filters.kinds)
    if filters.folder is not None and filters.folder.strip("/"):
        where.append(_at_or_below("e."))
        args += folder_bounds(filters.folder)
    if filters.changed_after is not None:
        where.append("e.modified >= ?")
        args.append(filters.changed_after)
    if filters.changed_before is not None:
        where.append("e.modified < ?")
        args.append(filters.changed_before)
    return where


class SQLiteIndex:
    """The index in one SQLite file (beside the store: `find-index.sqlite3`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._held: set[str] = set()

    def __str__(self) -> str:
        return str(self.path)

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise IndexError_("the find index is not open")
        return self._db

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # before SQLite creates it
        os.chmod(self.path, 0o600)  # an older file, or one made under a laxer umask
        try:
            self._db = await aiosqlite.connect(self.path)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=5000", "secure_delete=ON"):
                await self.db.execute(f"PRAGMA {pragma}")
            await self.db.executescript(SCHEMA)
            await self.db.commit()
        except aiosqlite.Error as exc:
            await self.close()
            raise IndexError_(f"cannot use the find index at {self.path}: {exc}") from None
        except BaseException:
            await self.close()
            raise

    @contextlib.asynccontextmanager
    async def hold(self, user: str) -> AsyncIterator[bool]:
        """One process per SQLite file: a set of the users whose background round is under way."""
        if user in self._held:
            yield False
            return
        self._held.add(user)
        try:
            yield True
        finally:
            self._held.discard(user)

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def put(self, user: str, items: Sequence[Item]) -> None:
        owner = owner_tag(user)
        rows = [
            (
                user,
                owner,
                i.kind,
                i.key,
                clean_text(i.title, 4096),
                clean_text(i.location, 4096),
                i.modified,
                i.version,
                clean_text(i.body),
            )
            for i in items
        ]
        await self.db.executemany(_UPSERT, rows)
        if rows:
            await changed(self.db, user)
        await self.db.commit()

    async def remove(self, user: str, kind: str, keys: Collection[str]) -> int:
        removed = 0
        for key in keys:
            cursor = await self.db.execute(
                "DELETE FROM find_entries WHERE user = ? AND kind = ? AND key = ?", (user, kind, key)
            )
            removed += cursor.rowcount
        if removed:
            await changed(self.db, user)
        await self.db.commit()
        return removed

    async def remove_below(self, user: str, kind: str, folder: str) -> int:
        cursor = await self.db.execute(
            f"DELETE FROM find_entries WHERE user = ? AND kind = ? AND {_at_or_below()}",  # noqa: S608
            (user, kind, *folder_bounds(folder)),
        )
        if cursor.rowcount:
            await changed(self.db, user)
        await self.db.commit()
        return cursor.rowcount

    async def versions(self, user: str, kind: str, location: str | None = None) -> dict[str, str]:
        sql, args = "SELECT key, version FROM find_entries WHERE user = ? AND kind = ?", [user, kind]
        if location is not None:
            sql, args = sql + " AND location = ?", [*args, location]
        async with self.db.execute(sql, args) as cursor:
            return {str(k): str(v) for k, v in await cursor.fetchall()}

    async def marks(self, user: str, source: str) -> dict[str, str]:
        async with self.db.execute(
            "SELECT key, version FROM find_marks WHERE user = ? AND source = ?", (user, source)
        ) as cursor:
            return {str(k): str(v) for k, v in await cursor.fetchall()}

    async def set_marks(self, user: str, source: str, marks: dict[str, str | None]) -> None:
        for key, version in marks.items():
            if version is None:
                await self.db.execute(
                    "DELETE FROM find_marks WHERE user = ? AND source = ? AND key = ?", (user, source, key)
                )
            else:
                await self.db.execute(
                    "INSERT INTO find_marks VALUES (?, ?, ?, ?) ON CONFLICT (user, source, key) "
                    "DO UPDATE SET version = excluded.version",
                    (user, source, key, version),
                )
        await self.db.commit()

    async def search(
        self, user: str, query: Query, filters: Filters, *, limit: int, offset: int = 0
    ) -> list[Hit]:
        limit, offset = bounded(limit, offset)
        where = ["find_text MATCH ?", "e.user = ?"]
        args: list[object] = [match_expression(user, query), user]
        where += filtered(filters, args)
        marks = f"char({ord(START_MARK)}), char({ord(END_MARK)})"
        sql = (
            "SELECT e.kind, e.key, e.title, e.location, e.modified, e.version, "  # noqa: S608 - built of constants and placeholders
            f"snippet(find_text, 3, {marks}, ' … ', 24), highlight(find_text, 1, {marks}) "
            "FROM find_text JOIN find_entries AS e ON e.id = find_text.rowid "
            f"WHERE {' AND '.join(where)} "
            "ORDER BY bm25(find_text, 0.0, 10.0, 4.0, 1.0), e.id LIMIT ? OFFSET ?"
        )
        async with self.db.execute(sql, [*args, limit, offset]) as cursor:
            rows = await cursor.fetchall()
        hits = []
        for kind, key, title, location, modified, version, excerpt, marked_title in rows:
            if START_MARK not in excerpt and START_MARK in marked_title:
                excerpt = marked_title
            hits.append(Hit(kind, key, title, location, float(modified), version, excerpt))
        return hits

    async def status(self, user: str) -> Status:
        async with self.db.execute(
            "SELECT kind, count(*) FROM find_entries WHERE user = ? GROUP BY kind", (user,)
        ) as cursor:
            items = {str(kind): int(count) for kind, count in await cursor.fetchall()}
        async with self.db.execute(
            "SELECT count(*) FROM find_marks WHERE user = ? AND source = 'folder'", (user,)
        ) as cursor:
            (folders,) = await cursor.fetchone() or (0,)
        async with self.db.execute(
            "SELECT synced_at, complete, error FROM find_users WHERE user = ?", (user,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return Status(items=items, folders=int(folders))
        return Status(items, int(folders), row[0], bool(row[1]), str(row[2]))

    async def set_status(self, user: str, *, synced_at: float, complete: bool, error: str) -> None:
        await self.db.execute(
            "INSERT INTO find_users VALUES (?, ?, ?, ?) ON CONFLICT (user) DO UPDATE SET "
            "synced_at = excluded.synced_at, complete = excluded.complete, error = excluded.error",
            (user, synced_at, int(complete), clean_text(error, 1000)),
        )
        await self.db.commit()

    async def forget(self, user: str) -> int:
        try:
            cursor = await self.db.execute("DELETE FROM find_entries WHERE user = ?", (user,))
            removed = cursor.rowcount
            await self.db.execute("DELETE FROM find_marks WHERE user = ?", (user,))
            await self.db.execute("DELETE FROM find_users WHERE user = ?", (user,))
            await self.db.execute("DELETE FROM find_changes WHERE user = ?", (user,))
            if removed:  # the deleted postings leave the FTS5 segments now, not at some later merge
                await self.db.execute("INSERT INTO find_text (find_text) VALUES ('optimize')")
        except BaseException:
            await self.db.rollback()
            raise
        await self.db.commit()
        return removed
