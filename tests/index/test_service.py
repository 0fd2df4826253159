"""The find index goes with the grant: deleting a user's grant deletes their index and its
passages' vectors (and only theirs), even when another hook fails; an index never made is not
made for that."""

from __future__ import annotations

from pathlib import Path

import pytest

from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.index.engine import Filters, Item
from nextcloud_mcp_server.index.meaning import BACKGROUND_REST
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.service import FindService, index_path
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import Grant, SQLiteStore


def _settings(tmp_path: Path) -> Settings:
    return load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="admin",
        nextcloud_password="pw",
        store_path=tmp_path / "store.sqlite3",
    )


async def test_deleting_a_grant_deletes_that_users_index_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """alice's grant deleted: her items are gone, bob's stay; a failing hook before it changes nothing."""
    settings = _settings(tmp_path)
    find = FindService(settings)
    store = SQLiteStore(tmp_path / "store.sqlite3", Cipher([generate_key()]))
    await store.open()

    async def failing(subject: str) -> None:
        raise RuntimeError("a broken hook")

    store.grant_deleted += [failing, find.forget]
    try:
        index = await find.index()
        assert index_path(settings).parent == tmp_path
        for user in ("alice", "bob"):
            await store.save_grant(Grant(user, user, "oidc", "refresh_token", "rt"))
            await index.put(user, [Item("note", "1", "t", "", 0.0, "e", "heron")])
            meaning = await find.meaning()
            assert meaning is not None
            assert await meaning.catch_up(user) == 1
            assert len(await meaning.nearest(user, "herons", Filters(), limit=5)) == 1
            assert user in meaning.cache  # kept in memory between calls (docs/ADR/0095)
        assert await store.delete_grant("alice")
        assert meaning is not None
        assert "alice" not in meaning.cache
        assert "bob" in meaning.cache
        query = parse_query("heron")
        assert await index.search("alice", query, Filters(), limit=5) == []
        assert len(await index.search("bob", query, Filters(), limit=5)) == 1
        # the passages' vectors go too: nothing of alice's text is left in the file
        assert meaning is not None
        assert (await meaning.progress("alice")).embedded == 0
        assert len(await meaning.nearest("bob", "herons", Filters(), limit=5)) == 1
        rows = await (
            await index.db.execute("SELECT count(*) FROM find_passages WHERE user = 'alice'")
        ).fetchall()  # type: ignore[attr-defined]
        assert rows == [(0,)]
        assert await store.get_grant("alice") is None
        assert "a broken hook" in caplog.text
    finally:
        await find.close()
        await store.close()


async def test_forgetting_without_an_index_file_makes_none(tmp_path: Path) -> None:
    """A grant deleted on a server whose find index was never used leaves no index file behind."""
    settings = _settings(tmp_path)
    find = FindService(settings)
    assert await find.forget("alice") == 0
    assert not index_path(settings).exists()
    await find.close()


async def test_the_runtime_wires_the_index_to_the_stores_grant_deletion(tmp_path: Path) -> None:
    """With offline access, the runtime's store deletes a user's find index with their grant."""
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        oidc_issuer="https://idp.example.com",
        mcp_public_url="https://mcp.example.com/mcp",
        mcp_allowed_hosts="mcp.example.com",
        oidc_client_id="mcp",
        oidc_client_secret="secret",
        enable_offline_access=True,
        token_encryption_key=generate_key(),
        store_path=tmp_path / "store.sqlite3",
    )
    runtime = Runtime(settings)
    assert runtime.store is not None
    await runtime.store.open()
    try:
        index = await runtime.find.index()
        await runtime.store.save_grant(Grant("carol", "carol", "oidc", "refresh_token", "rt"))
        await index.put("carol", [Item("note", "1", "t", "", 0.0, "e", "heron")])
        await runtime.store.delete_grant("carol")
        assert (await index.status("carol")).items == {}
    finally:
        await runtime.aclose()


async def test_embedding_in_the_background_rests_between_items(tmp_path: Path) -> None:
    """The run after an answer is paced (docs/ADR/0091): it is asked to rest, a call's is not."""
    find = FindService(_settings(tmp_path))
    try:
        meaning = await find.meaning()
        assert meaning is not None
        asked: list[dict[str, float]] = []

        async def catch_up(user: str, **bounds: float) -> int:
            asked.append(bounds)
            return 0

        meaning.catch_up = catch_up  # type: ignore[method-assign]
        find.continue_in_background("alice")
        await find._background["alice"]
        assert asked == [{"max_items": 2_000, "seconds": 120.0, "rest": BACKGROUND_REST}]
        assert BACKGROUND_REST >= 1.0
    finally:
        await find.close()
