"""What reaches the log from outside is neutralised, and at DEBUG no user content is logged
(issue 13: CR/LF forged log lines; whole tool results and SQL parameters were logged)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.logs import RedactingFilter, configure_logging, neutralise
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.mcp_clients import http_session, running_app


def _record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("t", logging.INFO, __file__, 1, message, args, None)


def test_line_breaks_and_control_characters_cannot_forge_log_lines() -> None:
    record = _record("sign-in failed: %s", "nope\r\n2026-01-01 00:00:00 INFO auth: alice granted\x1b[2J")
    RedactingFilter().filter(record)
    message = record.getMessage()
    assert "\n" not in message
    assert "\r" not in message
    assert "\x1b" not in message
    assert "nope\\r\\n2026-01-01" in message


def test_neutralise_keeps_ordinary_text() -> None:
    assert neutralise("Grüße, tab\tok") == "Grüße, tab\tok"
    assert neutralise("a\u2028b\x00c\x85d") == "a\\u2028b\\x00c\\x85d"


def test_database_statements_are_not_logged_even_at_debug() -> None:
    configure_logging("DEBUG")
    try:
        assert not logging.getLogger("aiosqlite").isEnabledFor(logging.DEBUG)
    finally:
        configure_logging("WARNING")


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(("mcp.client", "httpx")):  # the test's own client
            self.lines.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture
def debug_log() -> Iterator[Collect]:
    """The server's own logging set up at DEBUG (as LOG_LEVEL=DEBUG does); restored afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    collect = Collect()
    configure_logging("DEBUG")
    root.addHandler(collect)
    try:
        yield collect
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])


@pytest.mark.integration
async def test_note_text_never_reaches_the_debug_log(settings: Settings, debug_log: Collect) -> None:
    text = "Private-Note-Body-7f3a"
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            made = await session.call_tool("nc_notes_create_note", {"title": "Diary", "content": text})
            assert not made.is_error
            note_id = (made.structured_content or {})["id"]
            read = await session.call_tool("nc_notes_get_note", {"note_id": note_id})
            assert text in str(read.structured_content)
    assert any("nc_notes_get_note" in line or "notes" in line for line in debug_log.lines)
    assert not [line for line in debug_log.lines if text in line]


async def test_audit_rows_cannot_be_forged_with_line_breaks(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.sqlite3", Cipher([generate_key()]))
    await store.open()
    try:
        await store.audit("alice", "failed", "the sign-in service said: no\n2026 alice granted\r")
        [event] = await store.audit_events("alice")
    finally:
        await store.close()
    assert event.detail == "the sign-in service said: no\\n2026 alice granted\\r"


@pytest.mark.integration
async def test_a_note_read_as_a_resource_never_reaches_the_debug_log(
    settings: Settings, debug_log: Collect
) -> None:
    text = "Private-Resource-Body-2c9e"
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            made = await session.call_tool("nc_notes_create_note", {"title": "Diary", "content": text})
            note_id = (made.structured_content or {})["id"]
            read = await session.read_resource(f"nextcloud://notes/{note_id}")
            assert text in str(read.contents)
    assert any("resources/read" in line or "notes" in line for line in debug_log.lines)
    assert not [line for line in debug_log.lines if text in line]
