"""A refresh token this server stops using is revoked at the identity provider (RFC 7009), not
left valid there (issue 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.mcp_clients import http_session
from tests.nextcloud_double import NextcloudDouble
from tests.offline import CONSENT_META, KEY, OfflineServer, browse, offline_server, provision
from tests.oidc import IdP

pytestmark = pytest.mark.integration


async def _refresh_token(server: OfflineServer, subject: str) -> str:
    store = SQLiteStore(server.settings.store_path, Cipher([KEY]))
    await store.open()
    try:
        grant = await store.get_grant(subject)
    finally:
        await store.close()
    assert grant is not None
    return grant.secret


def _usable_at_idp(server: OfflineServer, idp: IdP, refresh_token: str) -> bool:
    secret = server.settings.oidc_client_secret
    assert server.settings.oidc_client_id is not None
    assert secret is not None
    answer = httpx.post(
        idp.metadata["token_endpoint"],
        data={"grant_type": "refresh_token", "refresh_token": refresh_token},
        auth=(server.settings.oidc_client_id, secret.get_secret_value()),
        timeout=15,
    )
    return answer.status_code == 200


async def test_a_grant_dropped_after_nextcloud_refused_it_is_revoked_at_the_idp(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        await provision(server, "alice")
        dropped = await _refresh_token(server, "alice")
        double.inject("PROPFIND", "/remote.php/dav", 401)
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            asked = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        assert CONSENT_META in (asked.meta or {})
        assert server.grants() == []
        assert not _usable_at_idp(server, idp, dropped)


async def test_a_grant_replaced_by_a_second_consent_is_revoked_at_the_idp(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """Two consent links of one user, both completed: the second grant replaces the first in the
    store, and the first one's refresh token is revoked, not left valid at the IdP."""
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            first = (await session.call_tool("nc_webdav_list_directory", {"path": "/"})).meta[CONSENT_META]
            at_idp = httpx.get(first["url"], timeout=15)  # opened; the sign-in is not finished yet
            assert at_idp.status_code == 303
            second = (await session.call_tool("nc_webdav_list_directory", {"path": "/"})).meta[CONSENT_META]
        assert second["elicitationId"] != first["elicitationId"]
        assert "Connected" in (await asyncio.to_thread(browse, second["url"])).text
        replaced = await _refresh_token(server, "alice")
        assert "Connected" in (await asyncio.to_thread(browse, at_idp.headers["location"])).text
        current = await _refresh_token(server, "alice")
        assert current != replaced
        assert not _usable_at_idp(server, idp, replaced)
        assert _usable_at_idp(server, idp, current)
