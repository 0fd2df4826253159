"""A refresh token this server stops using is revoked at the identity provider (RFC 7009), not
left valid there (issue 13)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.mcp_clients import http_session
from tests.nextcloud_double import NextcloudDouble
from tests.offline import CONSENT_META, KEY, OfflineServer, offline_server, provision
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
