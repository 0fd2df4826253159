"""What the app tests without a Nextcloud share: an HTTP client to the address the mocked routes
answer (`tests.apps.replayed.BASE`), without retries, so each request counts once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests.apps.replayed import BASE


@pytest.fixture
async def http() -> AsyncIterator[NextcloudHTTP]:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client
    await client.aclose()
