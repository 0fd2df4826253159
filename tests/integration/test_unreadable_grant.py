"""A grant row that cannot be decrypted leaves its owner a way out (issue 13: disconnecting, the
status and check_logged_in all failed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import CONSENT_META, OfflineServer, offline_server, provision
from tests.oidc import IdP

pytestmark = pytest.mark.integration


def _corrupt(server: OfflineServer, subject: str) -> None:
    """The grant and the access token minted from it (sealed alike: a lost key loses both)."""
    server.store_rows(
        "UPDATE grants SET secret = substr(secret, 1, length(secret) - 4) || 'AAAA' WHERE subject = ?",
        subject,
    )
    server.store_rows(
        "UPDATE access_tokens SET credential = substr(credential, 1, length(credential) - 4) || 'AAAA' "
        "WHERE subject = ?",
        subject,
    )


async def test_an_unreadable_grant_is_reported_replaced_by_consent_and_removable(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    with offline_server(double, double_url, idp, store) as server:
        await provision(server, "alice")
        _corrupt(server, "alice")
    with offline_server(double, double_url, idp, store) as server:  # nothing cached in memory
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            status = structured(await session.call_tool("nc_auth_status", {}))
            asked = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
            checked = await session.call_tool("check_logged_in", {})
            revoked = structured(await session.call_tool("revoke_nextcloud_access", {}))
        assert server.grants() == []
        await provision(server, "alice")  # connecting again works
        assert server.grants() == ["alice"]
    assert status["connected"] is False
    assert "cannot be read" in status["problem"]
    assert asked.is_error
    assert CONSENT_META in (asked.meta or {})
    assert "cannot be read" in asked.content[0].text  # type: ignore[union-attr]
    assert not checked.is_error
    assert "/oauth/authorize-nextcloud" in checked.content[0].text  # type: ignore[union-attr]
    assert revoked == {"revoked": True, "at_provider": False}
