"""Sign-in by Nextcloud's Login Flow v2 (explicitly accepted, ADR 0033) and the consent page over
HTTP, against the Nextcloud double and a real SQLite store: the hand-off page, approve, decline,
and an app password deleted at Nextcloud whenever no grant comes of it."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nextcloud_mcp_server.authz.requests import (
    CONSENT_PATH,
)
from tests.authz.signin_server import (
    ALICE_PASSWORD,
    Server,
    consent_form,
    new_browser,
    serve,
)
from tests.nextcloud_double import NextcloudDouble
from tests.offline import sign_in_at_nextcloud

pytestmark = pytest.mark.integration


@pytest.fixture
def flow_server(double: NextcloudDouble, double_url: str, tmp_path: Path) -> Iterator[Server]:
    """A Login Flow v2 sign-in, explicitly accepted (AUTH_SERVER_LOGIN_FLOW_SIGNIN; ADR 0033)."""
    with serve(
        double,
        double_url,
        tmp_path / "store.sqlite3",
        nextcloud_consent_provider="login-flow-v2",
        auth_server_login_flow_signin=True,
    ) as running:
        yield running


async def _sign_in_by_login_flow(browser: httpx.AsyncClient, server: Server, request_id: str) -> str:
    """The hand-off page; the person follows its link and grants access at Nextcloud; the page,
    reloading itself, goes on to the consent page. The hand-off page's HTML."""
    handoff = await browser.get(server.signin_url(request_id))
    assert handoff.status_code == 200, handoff.text
    link = re.search(r"href='([^']+)' target=_blank", handoff.text)
    refresh = re.search(r"http-equiv=refresh content='3; url=([^']+)'", handoff.text)
    assert link is not None, handoff.text
    assert refresh is not None, handoff.text
    granted = await asyncio.to_thread(
        sign_in_at_nextcloud, html.unescape(link.group(1)), "alice", ALICE_PASSWORD
    )
    assert "Account connected" in granted.text
    deadline = time.monotonic() + 15
    while True:
        reloaded = await browser.get(f"{server.base}{html.unescape(refresh.group(1))}")
        if reloaded.status_code == 303:
            assert reloaded.headers["location"] == f"{CONSENT_PATH}?request={request_id}"
            return handoff.text
        assert reloaded.status_code == 200, reloaded.text
        assert time.monotonic() < deadline, "the sign-in never completed"
        await asyncio.sleep(0.2)


async def test_login_flow_sign_in_then_approve_keeps_the_app_password(flow_server: Server) -> None:
    server = flow_server
    request = await server.new_request()
    async with new_browser() as browser:
        handoff = await _sign_in_by_login_flow(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
    assert "<script" not in handoff
    assert "Sign in at Nextcloud" in handoff
    assert answer.status_code == 303
    assert server.requests.approved == [request.id]
    grant = await server.grant("alice")
    assert (grant.provider, grant.kind, grant.login) == ("login-flow-v2", "app_password", "alice")
    assert len(server.double.accounts["alice"].app_passwords) == 2  # the seeded one and ours


async def test_login_flow_decline_deletes_the_app_password(flow_server: Server) -> None:
    server = flow_server
    request = await server.new_request()
    before = set(server.double.accounts["alice"].app_passwords)
    async with new_browser() as browser:
        await _sign_in_by_login_flow(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "decline"})
    assert answer.status_code == 303
    assert server.requests.declined == [request.id]
    assert await server.grant("alice") is None
    assert server.double.login.deleted == ["alice"]
    assert set(server.double.accounts["alice"].app_passwords) == before


async def test_login_flow_hand_off_page_belongs_to_one_browser(flow_server: Server) -> None:
    server = flow_server
    request = await server.new_request()
    async with new_browser() as alice, new_browser() as mallory:
        first = await alice.get(server.signin_url(request.id))
        reload = await alice.get(server.signin_url(request.id))
        theirs = await mallory.get(server.signin_url(request.id))
    assert first.status_code == reload.status_code == 200
    assert theirs.status_code == 403
    assert "another browser" in theirs.text
    assert first.headers["content-security-policy"].startswith("default-src 'none'")


async def test_login_flow_without_grant_at_sign_in_deletes_the_app_password_at_once(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    with serve(
        double,
        double_url,
        tmp_path / "s.sqlite3",
        nextcloud_consent_provider="login-flow-v2",
        auth_server_login_flow_signin=True,
        auth_server_grant_at_signin=False,
    ) as server:
        before = set(double.accounts["alice"].app_passwords)
        request = await server.new_request()
        async with new_browser() as browser:
            await _sign_in_by_login_flow(browser, server, request.id)
            assert double.login.deleted == ["alice"]  # as soon as alice was known
            fields = await consent_form(browser, server, request.id)
            answer = await browser.post(
                f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"}
            )
        assert answer.status_code == 303
        assert await server.grant("alice") is None
        assert set(double.accounts["alice"].app_passwords) == before


async def test_a_hand_off_page_reloading_while_the_sign_in_is_kept_goes_on_to_consent(
    flow_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page reloads every few seconds: whenever it finds the request signed in, the pending
    grant is there already (kept first; a reload in between was answered 'already signed in')."""
    server = flow_server
    assert server.runtime.store is not None
    keep = server.runtime.store.save_grant

    async def slow_keep(grant: Any) -> None:
        await asyncio.sleep(1.0)  # widens the moment between keeping the grant and binding the request
        await keep(grant)

    monkeypatch.setattr(server.runtime.store, "save_grant", slow_keep)
    request = await server.new_request()
    async with new_browser() as browser:
        await _sign_in_by_login_flow(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
    assert answer.status_code == 303
    assert (await server.grant("alice")).login == "alice"
