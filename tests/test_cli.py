"""The command line as a self-hoster meets it: a real process, real exit codes, real output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nextcloud_mcp_server import __version__
from tests.conftest import ADMIN_APP_PASSWORD, ADMIN_PASSWORD
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.processes import free_port, server_process


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}
    return subprocess.run(
        [sys.executable, "-m", "nextcloud_mcp_server", *args],
        env={**base, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_version_and_help() -> None:
    """--version prints the version; no command prints usage and exits 2."""
    version = cli("--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"nextcloud-mcp-server {__version__}")
    bare = cli()
    assert bare.returncode == 2
    assert "run" in bare.stderr
    assert "check" in bare.stderr


def test_missing_configuration_names_each_variable_on_one_line(tmp_path: Path) -> None:
    """With nothing configured, `run` stops with one line per missing variable and points to the demo."""
    result = cli("run", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("nextcloud-mcp-server: NEXTCLOUD_HOST is required")
    assert ".env.example" in lines[0]
    assert "`make demo` starts a sandbox" in lines[0]
    assert "NEXTCLOUD_USERNAME is required" in lines[1]
    assert "NEXTCLOUD_PASSWORD (or NEXTCLOUD_PASSWORD_FILE) is required" in lines[2]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("NEXTCLOUD_HOST", "ftp://cloud.example.com", "NEXTCLOUD_HOST must be an http(s) URL"),
        ("NEXTCLOUD_HOST", "https://user:pw@cloud.example.com", "without credentials"),
        ("NEXTCLOUD_TIMEOUT_SECONDS", "soon", "NEXTCLOUD_TIMEOUT_SECONDS must be a number"),
        ("NEXTCLOUD_TIMEOUT_SECONDS", "0", "NEXTCLOUD_TIMEOUT_SECONDS must be greater than 0"),
        ("NEXTCLOUD_VERIFY_TLS", "maybe", "NEXTCLOUD_VERIFY_TLS must be true or false"),
        ("NOTES_MAX_CONTENT_BYTES", "1.5", "NOTES_MAX_CONTENT_BYTES must be a whole number"),
        ("NEXTCLOUD_CA_BUNDLE", "/nonexistent.pem", "NEXTCLOUD_CA_BUNDLE must be the path of a readable PEM"),
        ("LOG_LEVEL", "loud", "LOG_LEVEL must be one of"),
        ("MCP_PORT", "70000", "MCP_PORT must be at most 65535"),
    ],
)
def test_malformed_values_are_named_with_what_is_expected(
    tmp_path: Path, variable: str, value: str, expected: str
) -> None:
    """Each malformed variable produces one line naming it and what it must be; nothing starts."""
    env = {
        "NEXTCLOUD_HOST": "https://cloud.example.com",
        "NEXTCLOUD_USERNAME": "u",
        "NEXTCLOUD_PASSWORD": "p",
    }
    result = cli("run", env={**env, variable: value}, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("nextcloud-mcp-server: ")
    assert expected in lines[0]
    assert "user:pw" not in result.stderr


def test_non_loopback_bind_is_refused_in_single_user_mode(server_env: dict[str, str], tmp_path: Path) -> None:
    """Binding 0.0.0.0 needs --allow-remote, and then MCP_ALLOWED_HOSTS."""
    refused = cli("run", "--transport", "http", "--host", "0.0.0.0", env=server_env, cwd=tmp_path)
    assert refused.returncode == 2
    assert "refusing to bind 0.0.0.0" in refused.stderr
    assert "--allow-remote" in refused.stderr
    no_hosts = cli(
        "run", "--transport", "http", "--host", "0.0.0.0", "--allow-remote", env=server_env, cwd=tmp_path
    )
    assert no_hosts.returncode == 2
    assert "MCP_ALLOWED_HOSTS is required" in no_hosts.stderr


def test_check_reports_a_working_setup(server_env: dict[str, str], tmp_path: Path) -> None:
    """Against the double, every check passes and the exit code is 0."""
    result = cli("check", env=server_env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in (
        "[ ok ] reachable",
        "[ ok ] credentials",
        "[ ok ] notes app",
        "[ ok ] webdav",
        "[ ok ] caldav",
    ):
        assert line in result.stdout
    assert "Nextcloud 29.0.6" in result.stdout
    assert "Result: ready" in result.stdout
    assert ADMIN_APP_PASSWORD not in result.stdout + result.stderr


def test_check_reads_a_dotenv_file(server_env: dict[str, str], tmp_path: Path) -> None:
    """The same configuration from ./.env instead of the environment works too."""
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in server_env.items()))
    assert cli("check", cwd=tmp_path).returncode == 0


def test_check_fails_on_wrong_credentials_and_skips_the_rest(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """A rejected password is one FAIL line with the fix; later checks are marked skipped."""
    result = cli("check", env={**server_env, "NEXTCLOUD_PASSWORD": "nope-nope"}, cwd=tmp_path)
    assert result.returncode == 1
    assert "[FAIL] credentials" in result.stdout
    assert "app password" in result.stdout
    assert "[skip] notes app" in result.stdout


def test_check_fails_when_nextcloud_is_down(tmp_path: Path) -> None:
    """Connection refused is reported as unreachable, with the host."""
    port = free_port()
    env = {"NEXTCLOUD_HOST": f"http://127.0.0.1:{port}", "NEXTCLOUD_USERNAME": "u", "NEXTCLOUD_PASSWORD": "p"}
    result = cli("check", env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert f"[FAIL] reachable      Nextcloud at 127.0.0.1:{port}: connection refused" in result.stdout


def test_check_fails_without_the_notes_app(
    double: NextcloudDouble, server_env: dict[str, str], tmp_path: Path
) -> None:
    """A Nextcloud without the Notes app fails that check and still checks DAV."""
    double.notes_enabled = False
    result = cli("check", env=server_env, cwd=tmp_path)
    assert result.returncode == 1
    assert "[FAIL] notes app      the Notes app is not installed or not enabled" in result.stdout
    assert "[ ok ] webdav" in result.stdout


def test_check_warns_about_a_slow_login_password(
    double: NextcloudDouble, server_env: dict[str, str], tmp_path: Path
) -> None:
    """With the login password (each request verifies a hash), `check` recommends an app password."""
    double.accounts.login_password_delay = 0.3
    result = cli("check", env={**server_env, "NEXTCLOUD_PASSWORD": ADMIN_PASSWORD}, cwd=tmp_path)
    assert result.returncode == 0
    assert "[warn] password type" in result.stdout
    assert "looks like a login password" in result.stdout


async def test_run_http_serves_mcp_on_the_given_port(server_env: dict[str, str], tmp_path: Path) -> None:
    """`run --transport http` in a real process answers MCP at /mcp and /health."""
    port = free_port()
    args = ["run", "--transport", "http", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with server_process(args, env=server_env, cwd=tmp_path, ready_url=f"{base}/health") as process:
        async with http_session(f"{base}/mcp") as session:
            listed = structured(await session.call_tool("nc_notes_list_notes", {}))
        assert process.poll() is None
    assert listed["total"] == 0


def test_keys_generate_prints_a_fresh_32_byte_key() -> None:
    import base64

    first, second = cli("keys", "generate"), cli("keys", "generate")
    assert first.returncode == 0
    key = first.stdout.strip()
    assert len(base64.urlsafe_b64decode(key + "=")) == 32
    assert key != second.stdout.strip()


def _offline_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "NEXTCLOUD_HOST": "https://cloud.example.com",
        "OIDC_ISSUER": "https://id.example.com",
        "MCP_PUBLIC_URL": "http://127.0.0.1:8000/mcp",
        "OIDC_CLIENT_ID": "mcp",
        "OIDC_CLIENT_SECRET": "mcp-secret",
        "ENABLE_OFFLINE_ACCESS": "true",
        "STORE_PATH": str(tmp_path / "store.sqlite3"),
        **extra,
    }


def test_offline_access_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    result = cli("run", "--transport", "http", env=_offline_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "TOKEN_ENCRYPTION_KEY (or TOKEN_ENCRYPTION_KEY_FILE) is required" in result.stderr
    assert "keys generate" in result.stderr


def test_a_wrong_key_refuses_to_start_and_rotation_moves_to_a_new_key(tmp_path: Path) -> None:
    """Secrets stored under key A: starting with key B alone fails and changes nothing;
    `keys rotate` with B,A re-encrypts under B; then B alone works."""
    import asyncio

    from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
    from nextcloud_mcp_server.storage.store import Grant, SQLiteStore

    old, new = generate_key(), generate_key()
    path = tmp_path / "store.sqlite3"

    async def seed() -> None:
        store = SQLiteStore(path, Cipher([old]))
        await store.open()
        await store.save_grant(Grant("alice", "alice", "oidc", "refresh_token", "rt"))
        await store.close()

    asyncio.run(seed())
    before = path.read_bytes()
    refused = cli(
        "run", "--transport", "http", env=_offline_env(tmp_path, TOKEN_ENCRYPTION_KEY=new), cwd=tmp_path
    )
    assert refused.returncode == 2
    assert f"encrypted with key(s) {Cipher([old]).current_key_id}" in refused.stderr
    assert path.read_bytes() == before
    rotated = cli(
        "keys", "rotate", env=_offline_env(tmp_path, TOKEN_ENCRYPTION_KEY=f"{new},{old}"), cwd=tmp_path
    )
    assert rotated.returncode == 0, rotated.stderr
    assert f"re-encrypted 1 secret(s) under key {Cipher([new]).current_key_id}" in rotated.stdout
    check = cli("keys", "rotate", env=_offline_env(tmp_path, TOKEN_ENCRYPTION_KEY=new), cwd=tmp_path)
    assert check.returncode == 0
    assert "re-encrypted 0 secret(s)" in check.stdout
