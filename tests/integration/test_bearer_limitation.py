"""Nextcloud 29's Notes API refuses Bearer tokens: with the `oidc` consent provider a Notes call
says so and keeps the user's grant (issue 13: the grant was dropped on every Notes call)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import CONSENT_META, offline_server, provision
from tests.oidc import IdP

pytestmark = pytest.mark.integration


async def test_a_notes_call_refused_for_bearer_reports_the_limitation_and_keeps_the_grant(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        await provision(server, "alice")
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            first = await session.call_tool("nc_notes_list_notes", {})
            second = await session.call_tool("nc_notes_list_notes", {})
            files = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        grants = server.grants()
    for answer in (first, second):
        assert answer.is_error
        assert CONSENT_META not in (answer.meta or {})  # not asked to consent again
        text = answer.content[0].text  # type: ignore[union-attr]
        assert "refuses OAuth Bearer tokens" in text
        assert "NEXTCLOUD_CONSENT_PROVIDER" in text
    assert grants == ["alice"]
    assert files["total"] >= 0  # the grant still works where Bearer is accepted
