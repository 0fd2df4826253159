"""`keys rotate-signing` (a new token signing key; the old public one stays published) and
`keys rotate` re-sealing the authorization server's keys and clients, through the real command."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from tests.test_cli import cli


def env(tmp_path: Path, key: str) -> dict[str, str]:
    return {
        "NEXTCLOUD_HOST": "https://cloud.example.com",
        "MCP_PUBLIC_URL": "http://127.0.0.1:8000/mcp",
        "AUTH_SERVER_ENABLED": "true",
        "NEXTCLOUD_CONSENT_PROVIDER": "nextcloud-oauth2",
        "NEXTCLOUD_OAUTH2_CLIENT_ID": "mcp-server-at-nextcloud",
        "NEXTCLOUD_OAUTH2_CLIENT_SECRET": "not-used-by-these-tests",
        "TOKEN_ENCRYPTION_KEY": key,
        "STORE_PATH": str(tmp_path / "store.sqlite3"),
    }


def keys(tmp_path: Path) -> list[tuple[str, bool, str]]:
    """(kid, retired, key id of the sealed private half) per signing key."""
    with sqlite3.connect(tmp_path / "store.sqlite3") as db:
        rows = db.execute("SELECT kid, retired_at, private_key FROM authz_keys ORDER BY created_at")
        return [(kid, retired is not None, Cipher.key_id_of(sealed) or "") for kid, retired, sealed in rows]


def test_rotate_signing_then_reseal_under_a_new_encryption_key(tmp_path: Path) -> None:
    old, new = generate_key(), generate_key()
    first = cli("keys", "rotate-signing", env=env(tmp_path, old), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = cli("keys", "rotate-signing", env=env(tmp_path, old), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    found = keys(tmp_path)  # the first start made one; each rotation one more
    assert [retired for _, retired, _ in found] == [True, True, False]  # older ones stay published
    kid2, _, sealed2 = found[-1]
    assert f"new signing key {kid2}" in second.stdout
    assert sealed2 == Cipher([old]).current_key_id
    resealed = cli("keys", "rotate", env=env(tmp_path, f"{new},{old}"), cwd=tmp_path)
    assert resealed.returncode == 0, resealed.stderr
    assert "re-encrypted 1 secret(s)" in resealed.stdout
    assert keys(tmp_path)[-1] == (kid2, False, Cipher([new]).current_key_id)


def test_rotate_signing_needs_the_mode(tmp_path: Path) -> None:
    result = cli(
        "keys", "rotate-signing", env={**env(tmp_path, generate_key()), "AUTH_SERVER_ENABLED": "false"}
    )
    assert result.returncode == 2
    assert "needs AUTH_SERVER_ENABLED=true" in result.stderr
