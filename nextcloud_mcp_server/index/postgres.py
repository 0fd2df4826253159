"""The find index on PostgreSQL full-text search (STORE_URL's database; docs/ADR/0071).

`find_entries.doc` is a `tsvector` (GIN-indexed) of each item's title (weight A), location (B)
and text (D) under `find_simple` - a copy of `simple` that passes words through `unaccent` - and
under `find_<language>` (with that language's stemmer) for each language the deployment names.
Queries are built from the parsed words only (`query.py`): `to_tsquery` of one quoted lexeme,
`phraseto_tsquery`, combined with `&&`, `||` and `!!`; excerpts come from `ts_headline`, for the
page's rows only. Every statement names the user key.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import AsyncIterator, Collection, Sequence

import psycopg

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
)
from nextcloud_mcp_server.index.postgres_changes import changed, writing
from nextcloud_mcp_server.index.query import Query, Term
from nextcloud_mcp_server.storage.pg_pool import ConnectionPool
from nextcloud_mcp_server.storage.postgres import migrate, redacted_url
from nextcloud_mcp_server.storage.records import StoreError

__all__ = ["PostgresIndex", "filtered"]

LOCK = 7_114_041  # the advisory lock of the index's migrations and its language set-up
_WORDS = "word, hword, hword_part"
MIGRATIONS = [
    f"""
    CREATE EXTENSION IF NOT EXISTS unaccent;
    CREATE TEXT SEARCH CONFIGURATION find_simple (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION find_simple ALTER MAPPING FOR {_WORDS} WITH unaccent, simple;
    CREATE TABLE find_entries (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_key TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
        title TEXT NOT NULL, location TEXT NOT NULL, modified DOUBLE PRECISION NOT NULL,
        version TEXT NOT NULL, body TEXT NOT NULL, doc TSVECTOR NOT NULL,
        UNIQUE (user_key, kind, key)
    );
    CREATE INDEX find_entries_doc ON find_entries USING GIN (doc);
    CREATE INDEX find_entries_place ON find_entries (user_key, kind, location);
    CREATE TABLE find_marks (
        user_key TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL,
        PRIMARY KEY (user_key, source, key)
    );
    CREATE TABLE find_users (
        user_key TEXT PRIMARY KEY, synced_at DOUBLE PRECISION, complete BOOLEAN NOT NULL,
        error TEXT NOT NULL
    );
    CREATE TABLE find_settings (languages TEXT NOT NULL)
    """,
    # a change mark per user, set anew with every write of their items or passages (ADR 0095)
    """
    CREATE TABLE find_changes (user_key TEXT PRIMARY KEY, mark TEXT NOT NULL);
    INSERT INTO find_changes
        SELECT user_key, md5(random()::text) FROM (SELECT DISTINCT user_key FROM find_entries) AS u
    """,
]
_LANGUAGE = re.compile(r"^[a-z]{2,32}$")
_HEADLINE = (
    f"StartSel={START_MARK}, StopSel={END_MARK}, MaxWords=30, MinWords=12, "
    'MaxFragments=2, FragmentDelimiter=" … "'
)


class PostgresIndex:
    """Open with `await index.open()` (its pool is made in the running event loop)."""

    def __init__(self, url: str, *, languages: Sequence[str] = (), pool_size: int = 4) -> None:
        for language in languages:
            if not _LANGUAGE.match(language):
                raise IndexError_(f"not a text search language: {language!r}")
        self.url = url
        self.configs = ("find_simple", *(f"find_{language}" for language in languages))
        self._languages = tuple(languages)
        self._pool_size = pool_size
        self._pool: ConnectionPool | None = None

    def __str__(self) -> str:
        return redacted_url(self.url)

    @property
    def pool(self) -> ConnectionPool:
        if self._pool is None:
            raise IndexError_("the find index is not open")
        return self._pool

    async def open(self) -> None:
        self._pool = ConnectionPool(self.url, self._pool_size)
        try:
            await migrate(self.pool, LOCK, "find_version", MIGRATIONS, _too_new)
            await self._languages_ready()
        except (psycopg.Error, StoreError) as exc:
            await self.close()
            raise IndexError_(f"cannot use the find index at {self}: {exc}") from None

    async def _languages_ready(self) -> None:
        """A configuration per named language; the index is emptied when the set changed (its
        vectors were made with the old one; it is rebuilt from Nextcloud)."""
        wanted = ",".join(self._languages)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
            for language in self._languages:
                found = await (
                    await conn.execute("SELECT 1 FROM pg_ts_dict WHERE dictname = %s", (f"{language}_stem",))
                ).fetchone()
                if found is None:
                    raise IndexError_(f"PostgreSQL has no stemmer for {language!r} (FIND_LANGUAGES)")
                exists = await (
                    await conn.execute("SELECT 1 FROM pg_ts_config WHERE cfgname = %s", (f"find_{language}",))
                ).fetchone()
                if exists is None:  # names checked above: letters only
                    await conn.execute(
                        f"CREATE TEXT SEARCH CONFIGURATION find_{language} (COPY = {language})"
                    )
                    await conn.execute(
                        f"ALTER TEXT SEARCH CONFIGURATION find_{language} "
                        f"ALTER MAPPING FOR {_WORDS} WITH unaccent, {language}_stem"
                    )
            row = await (await conn.execute("SELECT languages FROM find_settings")).fetchone()
            if row is None or row[0] != wanted:
                for table in ("find_entries", "find_marks", "find_users", "find_settings", "find_changes"):
                    await conn.execute(f"DELETE FROM {table}")  # noqa: S608 - constants
                await conn.execute("INSERT INTO find_settings VALUES (%s)", (wanted,))

    @contextlib.asynccontextmanager
    async def hold(self, user: str) -> AsyncIterator[bool]:
        """One replica per user at a time (docs/ADR/0084): a session advisory lock, tried without
        waiting and held on its own connection until the end. A replica that dies mid-round loses
        its session and so the lock: no lease outlives its holder, none needs to expire."""
        digest = hashlib.sha256(b"nextcloud-mcp-find-sync:" + user.encode("utf-8", "replace")).digest()
        key = int.from_bytes(digest[:8], "big", signed=True)
        async with self.pool.connection() as conn:
            row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
            held = bool(row and row[0])
            try:
                yield held
            finally:
                if held and not (conn.closed or conn.broken):
                    # a session that ended (PostgreSQL restarted) took its lock with it
                    with contextlib.suppress(psycopg.OperationalError):
                        await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    def _doc(self) -> str:
        return " || ".join(
            f"setweight(to_tsvector('{c}', %(title)s), 'A') "
            f"|| setweight(to_tsvector('{c}', %(location)s), 'B') || to_tsvector('{c}', %(body)s)"
            for c in self.configs
        )

    async def put(self, user: str, items: Sequence[Item]) -> None:
        sql = (
            "INSERT INTO find_entries (user_key, kind, key, title, location, modified, version, body, doc) "  # noqa: S608 - the configurations' names are checked letters
            "VALUES (%(user)s, %(kind)s, %(key)s, %(title)s, %(location)s, %(modified)s, %(version)s, "
            f"%(body)s, {self._doc()}) ON CONFLICT (user_key, kind, key) DO UPDATE SET "
            "title = excluded.title, "
            "location = excluded.location, modified = excluded.modified, version = excluded.version, "
            "body = excluded.body, doc = excluded.doc"
        )
        rows = [
            {
                "user": user,
                "kind": item.kind,
                "key": item.key,
                "title": clean_text(item.title, 4096),
                "location": clean_text(item.location, 4096),
                "modified": item.modified,
                "version": item.version,
                "body": clean_text(item.body),
            }
            for item in items
        ]
        if not rows:
            return
        async with self.pool.connection() as conn:
            try:
                async with conn.transaction():
                    await writing(conn, user)
                    for values in rows:
                        await conn.execute(sql, values)
                    await changed(conn, user)
                return
            except psycopg.errors.ProgramLimitExceeded:
                pass
            # a text whose vector is over 1 MB: again, each item in a savepoint, that one with less text
            async with conn.transaction():
                await writing(conn, user)
                for values in rows:
                    try:
                        async with conn.transaction():
                            await conn.execute(sql, values)
                    except psycopg.errors.ProgramLimitExceeded:
                        values["body"] = clean_text(str(values["body"]), 32 * 1024)
                        await conn.execute(sql, values)
                await changed(conn, user)

    async def _count(self, user: str, sql: str, args: Sequence[object]) -> int:
        """Rows deleted by `sql`, the user's change mark moved when there were any."""
        async with self.pool.connection() as conn, conn.transaction():
            await writing(conn, user)
            removed = (await conn.execute(sql, args)).rowcount
            if removed:
                await changed(conn, user)
        return removed

    async def remove(self, user: str, kind: str, keys: Collection[str]) -> int:
        sql = "DELETE FROM find_entries WHERE user_key = %s AND kind = %s AND key = ANY(%s)"
        return await self._count(user, sql, (user, kind, list(keys)))

    async def remove_below(self, user: str, kind: str, folder: str) -> int:
        sql = (
            "DELETE FROM find_entries WHERE user_key = %s AND kind = %s "
            "AND (location = %s OR left(location, %s) = %s)"
        )
        return await self._count(user, sql, (user, kind, *folder_bounds(folder)))

    async def _pairs(self, sql: str, args: Sequence[object]) -> dict[str, str]:
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(sql, args)).fetchall()
        return {str(k): str(v) for k, v in rows}

    async def versions(self, user: str, kind: str, location: str | None = None) -> dict[str, str]:
        sql, args = "SELECT key, version FROM find_entries WHERE user_key = %s AND kind = %s", [user, kind]
        if location is not None:
            sql, args = sql + " AND location = %s", [*args, location]
        return await self._pairs(sql, args)

    async def marks(self, user: str, source: str) -> dict[str, str]:
        sql = "SELECT key, version FROM find_marks WHERE user_key = %s AND source = %s"
        return await self._pairs(sql, (user, source))

    async def set_marks(self, user: str, source: str, marks: dict[str, str | None]) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            for key, version in marks.items():
                if version is None:
                    await conn.execute(
                        "DELETE FROM find_marks WHERE user_key = %s AND source = %s AND key = %s",
                        (user, source, key),
                    )
                else:
                    await conn.execute(
                        "INSERT INTO find_marks VALUES (%s, %s, %s, %s) ON CONFLICT (user_key, source, key) "
                        "DO UPDATE SET version = excluded.version",
                        (user, source, key, version),
                    )

    def _term(self, term: Term, args: list[object]) -> str:
        parts = []
        for config in self.configs:
            if term.prefix:
                word = term.words[0]  # letters and digits only (query.py)
                parts.append(f"to_tsquery('{config}', %s)")
                args.append(f"'{word}':*" if config == "find_simple" else f"'{word}'")
            else:
                parts.append(f"phraseto_tsquery('{config}', %s)")
                args.append(" ".join(term.words))
        return "(" + " || ".join(parts) + ")"

    def _tsquery(self, query: Query, args: list[object]) -> str:
        wanted = [self._term(t, args) for t in query.wanted]
        unwanted = [f"!!{self._term(t, args)}" for t in query.unwanted]
        return " && ".join(wanted + unwanted)

    async def search(
        self, user: str, query: Query, filters: Filters, *, limit: int, offset: int = 0
    ) -> list[Hit]:
        limit, offset = bounded(limit, offset)
        args: list[object] = []
        tsquery = self._tsquery(query, args)
        where = ["user_key = %s", "doc @@ q.q"]
        args.append(user)
        where += filtered(filters, args, table="")
        sql = (
            f"WITH q AS (SELECT {tsquery} AS q), page AS ("  # noqa: S608 - built of constants and placeholders
            "SELECT id, ts_rank(doc, q.q) AS rank FROM find_entries, q "
            f"WHERE {' AND '.join(where)} ORDER BY rank DESC, id LIMIT %s OFFSET %s) "
            "SELECT e.kind, e.key, e.title, e.location, e.modified, e.version, "
            "ts_headline('find_simple', e.body, q.q, %s), ts_headline('find_simple', e.title, q.q, %s) "
            "FROM page JOIN find_entries AS e ON e.id = page.id, q WHERE e.user_key = %s "
            "ORDER BY page.rank DESC, page.id"
        )
        args += [limit, offset, _HEADLINE, _HEADLINE, user]
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(sql, args)).fetchall()
        hits = []
        for kind, key, title, location, modified, version, excerpt, marked_title in rows:
            shown = (
                str(marked_title)
                if START_MARK not in str(excerpt) and START_MARK in str(marked_title)
                else excerpt
            )
            hits.append(
                Hit(
                    str(kind),
                    str(key),
                    str(title),
                    str(location),
                    float(str(modified)),
                    str(version),
                    str(shown),
                )
            )
        return hits

    async def status(self, user: str) -> Status:
        async with self.pool.connection() as conn:
            kinds = await (
                await conn.execute(
                    "SELECT kind, count(*) FROM find_entries WHERE user_key = %s GROUP BY kind", (user,)
                )
            ).fetchall()
            marks = await (
                await conn.execute(
                    "SELECT count(*) FROM find_marks WHERE user_key = %s AND source = 'folder'", (user,)
                )
            ).fetchone()
            row = await (
                await conn.execute(
                    "SELECT synced_at, complete, error FROM find_users WHERE user_key = %s", (user,)
                )
            ).fetchone()
        items = {str(kind): int(count) for kind, count in kinds}  # type: ignore[call-overload]
        folders = int(marks[0]) if marks else 0  # type: ignore[call-overload]
        if row is None:
            return Status(items=items, folders=folders)
        synced_at = float(str(row[0])) if row[0] is not None else None
        return Status(items, folders, synced_at, bool(row[1]), str(row[2]))

    async def set_status(self, user: str, *, synced_at: float, complete: bool, error: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO find_users VALUES (%s, %s, %s, %s) ON CONFLICT (user_key) DO UPDATE SET "
                "synced_at = excluded.synced_at, complete = excluded.complete, error = excluded.error",
                (user, synced_at, complete, clean_text(error, 1000)),
            )

    async def forget(self, user: str) -> int:
        async with self.pool.connection() as conn, conn.transaction():
            await writing(conn, user)
            removed = (await conn.execute("DELETE FROM find_entries WHERE user_key = %s", (user,))).rowcount
            await conn.execute("DELETE FROM find_marks WHERE user_key = %s", (user,))
            await conn.execute("DELETE FROM find_users WHERE user_key = %s", (user,))
            await conn.execute("DELETE FROM find_changes WHERE user_key = %s", (user,))
        return removed


def filtered(filters: Filters, args: list[object], *, table: str = "e.") -> list[str]:
    """The conditions on `find_entries` (as `table`, "" unnamed) that `filters` asks for (kinds,
    folder and below, changed after/before), their values appended to `args`: one reading for
    words and meaning."""
    where: list[str] = []
    if filters.kinds is not None:
        where.append(f"{table}kind = ANY(%s)")
        args.append(sorted(filters.kinds))
    if filters.folder is not None and filters.folder.strip("/"):
        where.append(f"({table}location = %s OR left({table}location, %s) = %s)")
        args += folder_bounds(filters.folder)
    if filters.changed_after is not None:
        where.append(f"{table}modified >= %s")
        args.append(filters.changed_after)
    if filters.changed_before is not None:
        where.append(f"{table}modified < %s")
        args.append(filters.changed_before)
    return where


def _too_new(version: int) -> Exception:
    return IndexError_(f"the find index was made by a newer version of this server (schema {version})")
