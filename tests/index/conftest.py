"""What the index tests share: admin's Nextcloud client on the backend under test, and an
empty SQLite find index of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests.backends import Nextcloud


@pytest.fixture
async def client(nextcloud: Nextcloud) -> AsyncIterator[NextcloudClient]:
    http = NextcloudHTTP(nextcloud.url)
    try:
        yield NextcloudClient(http, BasicCredential(nextcloud.admin.user, nextcloud.admin.app_password))
    finally:
        await http.aclose()


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[SQLiteIndex]:
    opened = SQLiteIndex(tmp_path / "find-index.sqlite3")
    await opened.open()
    yield opened
    await opened.close()
