"""Limits that fit each protocol era (issue 39): a client of the stateless 2026-07-28 protocol
opens no session, so its calls are limited as calls - per user, in rate and in flight - and
never by the budget of new sessions that handshake-era clients have."""

from __future__ import annotations

import pytest
from mcp import Client

from nextcloud_mcp_server.config import Settings
from tests.mcp_clients import running_app, structured

pytestmark = pytest.mark.integration

LIST = ("nc_webdav_list_directory", {"path": "/"})


async def test_a_2026_client_is_not_throttled_after_ten_calls(settings: Settings) -> None:
    """20 calls in a row from the official SDK client pinned to 2026-07-28, on one server in
    single-user mode: every one is answered (before: 10 answers, then 429 "Too many new
    sessions" for each call beyond one a second)."""
    with running_app(settings) as base:
        async with Client(f"{base}/mcp", mode="2026-07-28") as client:
            answered = [structured(await client.call_tool(*LIST))["total"] for _ in range(20)]
    assert len(answered) == 20
