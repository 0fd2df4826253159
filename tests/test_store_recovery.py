"""What is left unreadable in the store never blocks its owner or the operator (issue 13)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.test_cli import _offline_env, cli


def test_keys_rotate_drops_a_consent_state_under_a_removed_key(tmp_path: Path) -> None:
    """Only a short-lived consent state remains under the old key, which is no longer configured:
    rotation drops it (that sign-in has to start again) instead of ending in a traceback."""
    old, new = generate_key(), generate_key()
    path = tmp_path / "store.sqlite3"

    async def seed() -> None:
        store = SQLiteStore(path, Cipher([old]))
        await store.open()
        elicitation = await store.create_elicitation("alice", 300)
        await store.create_state(elicitation.id, "alice", "verifier", "nonce", 600)
        await store.close()

    asyncio.run(seed())
    rotated = cli("keys", "rotate", env=_offline_env(tmp_path, TOKEN_ENCRYPTION_KEY=new), cwd=tmp_path)
    assert rotated.returncode == 0, rotated.stderr
    assert "Traceback" not in rotated.stderr
    assert "dropped 1 unfinished sign-in" in rotated.stdout
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM oauth_states").fetchone() == (0,)


def test_keys_rotate_names_an_unreadable_grant_instead_of_a_traceback(tmp_path: Path) -> None:
    old, new = generate_key(), generate_key()
    path = tmp_path / "store.sqlite3"

    async def seed() -> None:
        from nextcloud_mcp_server.storage.records import Grant

        store = SQLiteStore(path, Cipher([old]))
        await store.open()
        await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt"))
        await store.close()

    asyncio.run(seed())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE grants SET secret = substr(secret, 1, length(secret) - 4) || 'AAAA'")
    env = _offline_env(tmp_path, TOKEN_ENCRYPTION_KEY=f"{new},{old}")
    rotated = cli("keys", "rotate", env=env, cwd=tmp_path)
    assert "Traceback" not in rotated.stderr
    assert rotated.returncode == 0, rotated.stderr
    assert "1 grant(s) could not be read (alice)" in rotated.stdout
