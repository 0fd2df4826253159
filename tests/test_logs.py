"""Secrets never reach the log: unit tests of the filter, and the real server's stderr at DEBUG."""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import pytest

from nextcloud_mcp_server.logs import REDACTED, RedactingFilter
from tests.conftest import ADMIN_APP_PASSWORD
from tests.mcp_clients import stdio_session


def _record(message: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    return logging.LogRecord(
        "t", logging.INFO, __file__, 1, message, args, (type(exc), exc, None) if exc else None
    )


def test_configured_secrets_and_credential_shapes_are_redacted() -> None:
    """A configured password, a Bearer token and token parameters disappear from messages."""
    filt = RedactingFilter(["s3cret-app-password"])
    record = _record(
        "login with %s, header Authorization: Bearer eyJhbGciOi.payload.sig and refresh_token=rt-123456",
        "s3cret-app-password",
    )
    assert filt.filter(record)
    message = record.getMessage()
    assert "s3cret-app-password" not in message
    assert "eyJhbGciOi" not in message
    assert "rt-123456" not in message
    assert message.count(REDACTED) == 3


def test_secrets_inside_exception_text_are_redacted() -> None:
    """A traceback that quotes a secret is redacted too."""
    filt = RedactingFilter(["hunter2-hunter2"])
    try:
        raise ValueError("password was hunter2-hunter2")
    except ValueError as exc:
        record = _record("failed", exc=exc)
    filt.filter(record)
    assert record.exc_text is not None
    assert "hunter2-hunter2" not in record.exc_text


def test_short_values_are_not_treated_as_secrets() -> None:
    """A one-letter 'secret' would redact every occurrence of that letter: ignored."""
    filt = RedactingFilter(["a"])
    record = _record("a normal message")
    filt.filter(record)
    assert record.getMessage() == "a normal message"


@pytest.mark.integration
async def test_the_servers_debug_log_contains_no_password_or_authorization(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """At DEBUG, through successful and failing calls, stderr never shows the app password, the
    wrong password tried, or an Authorization header value."""
    log = tmp_path / "server.log"
    wrong = "Wrong-Secret-Value-42"
    with log.open("w") as errlog:
        async with stdio_session(
            {**server_env, "LOG_LEVEL": "DEBUG"}, cwd=tmp_path, errlog=errlog
        ) as session:
            await session.call_tool("nc_notes_create_note", {"title": "t", "content": "c"})
            await session.call_tool("nc_notes_list_notes", {})
            await session.call_tool("nc_notes_get_note", {"note_id": 999})
        env = {**server_env, "LOG_LEVEL": "DEBUG", "NEXTCLOUD_PASSWORD": wrong}
        async with stdio_session(env, cwd=tmp_path, errlog=errlog) as session:
            failed = await session.call_tool("nc_notes_list_notes", {})
    assert failed.is_error
    text = log.read_text()
    assert "DEBUG" in text  # the log really was at DEBUG
    assert "/index.php/apps/notes/api/v1/notes" in text  # and it did log the requests
    for secret in (ADMIN_APP_PASSWORD, wrong):
        assert secret not in text
        assert base64.b64encode(f"admin:{secret}".encode()).decode() not in text


@pytest.mark.integration
@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_refused_tool_calls_are_logged_at_debug_only(
    server_env: dict[str, str], tmp_path: Path, level: str
) -> None:
    """A missing note and arguments that fail validation are answers to the model: at INFO the
    server's stderr stays silent about them; at DEBUG they appear, marked DEBUG."""
    log = tmp_path / "server.log"
    with log.open("w") as errlog:
        async with stdio_session({**server_env, "LOG_LEVEL": level}, cwd=tmp_path, errlog=errlog) as session:
            missing = await session.call_tool("nc_notes_get_note", {"note_id": 999})
            malformed = await session.call_tool("nc_notes_get_note", {"note_id": "not a number"})
    assert missing.is_error
    assert malformed.is_error
    lines = [line for line in log.read_text().splitlines() if "nc_notes_get_note" in line]
    if level == "INFO":
        assert lines == []
    else:
        assert len(lines) == 2, lines
        assert all(" DEBUG mcp.server.mcpserver.server: Tool 'nc_notes_get_note'" in line for line in lines)
