"""Consent requests are bounded per user and Login Flow pollers server-wide (issue 13: 150 consent
requests per second were accepted and their links started 150 pollers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp_clients import http_session
from tests.nextcloud_double import NextcloudDouble
from tests.offline import CONSENT_META, OfflineServer, offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration


async def _ask(server: OfflineServer, user: str) -> Any:
    """A call without a grant from a client without elicitation: the link comes in `_meta`."""
    async with http_session(server.mcp, headers=server.headers(user)) as session:
        answer = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
    assert answer.is_error
    return answer


def _link(answer: Any) -> tuple[str, str]:
    consent = (answer.meta or {})[CONSENT_META]
    return consent["url"], consent["elicitationId"]


def _follow(url: str) -> httpx.Response:
    """A browser opening the consent link (not following on to the sign-in page)."""
    return httpx.get(url, timeout=15)


async def test_an_open_consent_is_reused_and_pending_ones_are_capped(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    with offline_server(double, double_url, idp, store, consent_max_pending_per_user=2) as server:
        first = [_link(await _ask(server, "alice")) for _ in range(5)]
        assert len({eid for _, eid in first}) == 1  # five calls, one consent request
        assert _follow(first[0][0]).status_code == 303
        second = _link(await _ask(server, "alice"))
        assert second[1] != first[0][1]  # the used link is not handed out again
        assert _follow(second[0]).status_code == 303
        refused = await _ask(server, "alice")
        bob = _link(await _ask(server, "bob"))
        rows = server.store_rows("SELECT subject FROM elicitations ORDER BY created_at")
    text = refused.content[0].text
    assert "CONSENT_MAX_PENDING_PER_USER" in text
    assert "2 sign-ins" in text
    assert CONSENT_META not in (refused.meta or {})
    assert bob[0].startswith(f"{server.base}/oauth/authorize-nextcloud")
    assert [r[0] for r in rows] == ["alice", "alice", "bob"]


async def test_login_flow_pollers_are_capped_server_wide(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    with offline_server(
        double,
        double_url,
        idp,
        store,
        nextcloud_consent_provider="login-flow-v2",
        login_flow_max_pollers=1,
    ) as server:
        alice, _ = _link(await _ask(server, "alice"))
        bob, bob_id = _link(await _ask(server, "bob"))
        polled = _follow(alice)
        refused = _follow(bob)
        status = server.store_rows("SELECT status, error FROM elicitations WHERE id = ?", bob_id)
    assert polled.status_code == 303
    assert refused.status_code == 503
    assert "Too many sign-ins at once" in refused.text
    assert status == [("failed", "1 Login Flow v2 sign-ins under way (LOGIN_FLOW_MAX_POLLERS)")]


async def test_check_logged_in_reuses_the_open_consent_too(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            answers = [await session.call_tool("check_logged_in", {}) for _ in range(4)]
        asked = _link(await _ask(server, "alice"))
        rows = server.store_rows("SELECT id FROM elicitations")
    ids = {_link(a)[1] for a in answers}
    assert ids == {asked[1]}
    assert len(rows) == 1
