"""The command line as a self-hoster meets it: a real process, real exit codes, real output."""

from __future__ import annotations

import base64
import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.diagnostics import Check, run_checks
from tests.backends import Nextcloud
from tests.conftest import ADMIN_APP_PASSWORD
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
    assert (version.returncode, version.stdout.strip()) == (0, f"nextcloud-mcp-bridge {__version__}")
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
    assert lines[0].startswith("nextcloud-mcp-bridge: NEXTCLOUD_HOST is required")
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
    assert lines[0].startswith("nextcloud-mcp-bridge: ")
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


class _Meter:
    """A virtual clock that every request to the Nextcloud under test (real HTTP) moves on by
    what it would cost on a real server: `slow` seconds with the login password, 0.05 s otherwise.
    The verdict of `check` then depends on the rule alone, never on how busy this machine is."""

    def __init__(self, login_password: str, slow: float) -> None:
        self.now = 0.0
        self._slow = slow
        self._login = base64.b64encode(f"admin:{login_password}".encode()).decode()
        self.trace = aiohttp.TraceConfig()
        self.trace.on_request_start.append(self._started)

    def clock(self) -> float:
        return self.now

    async def _started(
        self, session: object, context: object, params: aiohttp.TraceRequestStartParams
    ) -> None:
        with_login_password = params.headers.get("authorization") == f"Basic {self._login}"
        self.now += self._slow if with_login_password else 0.05


async def _check_with(nextcloud: Nextcloud, password: str, slow: float) -> list[Check]:
    settings = load_settings(
        env_file=None,
        nextcloud_host=nextcloud.url,
        nextcloud_username=nextcloud.admin.user,
        nextcloud_password=password,
    )
    meter = _Meter(nextcloud.admin.password, slow)
    return await run_checks(settings, trace_configs=[meter.trace], clock=meter.clock)


async def test_check_warns_about_a_slow_login_password(nextcloud: Nextcloud) -> None:
    """With the login password (each request verifies a hash: 0.8 s here), `check` recommends an
    app password; everything else still passes."""
    results = await _check_with(nextcloud, nextcloud.admin.password, slow=0.8)
    by_name = {c.name: c for c in results}
    assert by_name["password type"].status == "warn"
    assert "looks like a login password" in by_name["password type"].detail
    assert "800 ms against 50 ms" in by_name["password type"].detail
    assert all(c.status == "ok" for c in results if c.name != "password type"), results


@pytest.mark.parametrize("password", ["app", "fast login"])
async def test_check_stays_quiet_when_authenticated_requests_are_fast(
    nextcloud: Nextcloud, password: str
) -> None:
    """An app password, or a login password the server verifies quickly, gets no warning."""
    secret = nextcloud.admin.app_password if password == "app" else nextcloud.admin.password
    results = await _check_with(nextcloud, secret, slow=0.06)
    assert [c.status for c in results] == ["ok"] * 6, results  # settings, then the five
    assert "password type" not in {c.name for c in results}


@pytest.fixture
def not_nextcloud(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain web server (Python's http.server over a folder): it answers, but is no Nextcloud."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", root
        finally:
            server.shutdown()
            thread.join(10)


@pytest.mark.parametrize(
    ("status_php", "what"),
    [
        (None, "no /status.php, HTTP 404"),
        ("<html>hello</html>", "/status.php: expected JSON but got"),
        ('{"status": "ok"}', "its /status.php is not Nextcloud's"),
        ("[1, 2, 3]", "its /status.php is not Nextcloud's"),
    ],
)
def test_check_says_when_the_host_is_not_a_nextcloud(
    not_nextcloud: tuple[str, Path], tmp_path: Path, status_php: str | None, what: str
) -> None:
    """A web server that is not Nextcloud is named as such, with what to put in NEXTCLOUD_HOST."""
    url, root = not_nextcloud
    if status_php is not None:
        (root / "status.php").write_text(status_php)
    env = {"NEXTCLOUD_HOST": url, "NEXTCLOUD_USERNAME": "u", "NEXTCLOUD_PASSWORD": "p"}
    result = cli("check", env=env, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if "reachable" in line]
    assert line.startswith("  [FAIL] reachable ")
    assert "answered, but it is not a Nextcloud" in line
    assert what in line
    assert "NEXTCLOUD_HOST must be the address" in line
    assert "[skip] credentials" in result.stdout


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
    first, second = cli("keys", "generate"), cli("keys", "generate")
    assert first.returncode == 0
    key = first.stdout.strip()
    assert len(base64.urlsafe_b64decode(key + "=")) == 32
    assert key != second.stdout.strip()
    # where it goes, on stderr, so `keys generate >> file` still writes the bare key
    assert "Put it in TOKEN_ENCRYPTION_KEY" in first.stderr
    assert "nextcloud-mcp-bridge keys rotate" in first.stderr
    assert key not in first.stderr


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


def test_what_startup_made_is_taken_out_of_the_collectors_sight() -> None:
    """Before serving, the long-lived objects of startup are frozen: full collections while
    serving no longer walk them (ADR 0031)."""
    import gc

    from nextcloud_mcp_server.cli import _settle_heap

    assert gc.get_freeze_count() == 0
    try:
        _settle_heap()
        assert gc.get_freeze_count() > 10_000  # modules, classes, schemas of this very process
    finally:
        gc.unfreeze()
