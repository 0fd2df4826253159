"""A server that says what it found (issue 33): an address copied from the browser works and is
named; the start checks Nextcloud in the background and logs it; the first tool call after a
failed check carries the check's words; `make run` in a terminal says what it waits for."""

from __future__ import annotations

import logging
import os
import pty
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from nextcloud_mcp_server import diagnostics
from nextcloud_mcp_server.config import load_settings
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, stdio_session, structured
from tests.test_cli import cli

pytestmark = pytest.mark.integration


def _text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))


def _env(nextcloud: Nextcloud, host: str, password: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    return {**base, "NEXTCLOUD_HOST": host, "NEXTCLOUD_USERNAME": "admin", "NEXTCLOUD_PASSWORD": password}


def test_check_takes_an_address_copied_from_the_browser_and_says_which_to_set(
    nextcloud: Nextcloud, tmp_path: Path
) -> None:
    copied = f"{nextcloud.url}/index.php/apps/files/?dir=/&fileid=5"
    result = cli("check", env=_env(nextcloud, copied, nextcloud.admin.app_password), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (
        f"[warn] address        NEXTCLOUD_HOST {nextcloud.url}/index.php/apps/files/ is a page"
        in result.stdout
    )
    assert f"Set NEXTCLOUD_HOST={nextcloud.url}" in result.stdout
    assert "[ ok ] credentials" in result.stdout


async def test_tools_work_with_an_address_copied_from_the_browser(nextcloud: Nextcloud) -> None:
    settings = load_settings(
        env_file=None,
        nextcloud_host=f"{nextcloud.url}/apps/files/",
        nextcloud_username=nextcloud.admin.user,
        nextcloud_password=nextcloud.admin.app_password,
    )
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            written = await session.call_tool("nc_webdav_write_file", {"path": "copied.txt", "content": "x"})
            listing = structured(await session.call_tool("nc_webdav_list_directory", {"path": ""}))
    assert not written.is_error, written.content
    assert "copied.txt" in str(listing)


async def test_a_wrong_password_is_logged_at_start_and_named_by_the_first_failing_call(
    nextcloud: Nextcloud, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="nextcloud_mcp_server.diagnostics")
    # what the check says, not its bound (tested on the double): a freshly reset real Nextcloud on
    # a loaded machine can take longer than 10 s for the check's three requests
    monkeypatch.setattr(diagnostics, "STARTUP_CHECK_SECONDS", 120.0)
    settings = load_settings(
        env_file=None,
        nextcloud_host=nextcloud.url,
        nextcloud_username=nextcloud.admin.user,
        nextcloud_password="not-the-password",
    )
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            first = await session.call_tool("nc_notes_list_notes", {})
            second = await session.call_tool("nc_notes_list_notes", {})
    assert first.is_error
    assert "rejected user 'admin' and its password; create an app password" in _text(first)
    assert "found when this server started" in _text(first)
    assert _text(first).count("app password") == 1, _text(first)  # the reason and advice once
    assert second.is_error
    assert "found when this server started" not in _text(second)  # said once
    assert "credentials were rejected (401)" in _text(second)
    assert "Nextcloud check at start failed: Nextcloud at" in caplog.text


async def test_a_good_configuration_is_logged_at_start(nextcloud: Nextcloud, tmp_path: Path) -> None:
    """Over stdio, as Claude Desktop starts it: the log (stderr) says Nextcloud answered."""
    with tempfile.TemporaryFile("w+") as errlog:
        env = _env(nextcloud, nextcloud.url, nextcloud.admin.app_password)
        async with stdio_session(env, cwd=tmp_path, errlog=errlog) as session:
            structured(await session.call_tool("nc_webdav_list_directory", {"path": ""}))
            deadline = time.monotonic() + 30
            while "Nextcloud check at start:" not in (log := _read(errlog)):
                assert time.monotonic() < deadline, log
                await session.send_ping()
    assert "logged in as 'admin'" in log


def _read(errlog: object) -> str:
    errlog.seek(0)  # type: ignore[attr-defined]
    return str(errlog.read())  # type: ignore[attr-defined]


def test_run_in_a_terminal_says_what_it_waits_for(nextcloud: Nextcloud, tmp_path: Path) -> None:
    """`make run` in a terminal used to print nothing while it waited for JSON-RPC on stdin."""
    terminal, side = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nextcloud_mcp_server", "run"],
        stdin=side,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(nextcloud, nextcloud.url, nextcloud.admin.app_password),
        cwd=tmp_path,
        text=True,
    )
    os.close(side)
    try:
        assert process.stderr is not None
        said = ""
        deadline = time.monotonic() + 60
        while "waits for an MCP client" not in said:
            assert time.monotonic() < deadline, said
            line = process.stderr.readline()
            assert line, f"the server ended: {said}"
            said += line
    finally:
        os.close(terminal)  # the terminal goes away: stdin ends, the server stops
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert f"serving {nextcloud.url} as 'admin' over stdio" in said
    assert "`make check` tests the configuration" in said
