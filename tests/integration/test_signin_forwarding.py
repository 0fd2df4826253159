"""Issue 31 #1 in Chromium against the real Nextcloud 29: an attacker starts an authorization for
his own client and forwards the Nextcloud link his sign-in gives him; the victim, in her own
browser, signs in at Nextcloud and grants access. The attacker must get nothing.

The server is configured as a self-hoster following the old README would have it - consent
through Login Flow v2 - and has a client at Nextcloud's OAuth2 app, so it starts (without one it
refuses to; tests/authz/test_settings.py). Its sign-in is then the OAuth2 app, bound to the
browser that started (ADR 0033); the attacker forwards the strongest link he has: Nextcloud's
authorize URL with the state in it. Before that decision the sign-in was a Login Flow, and the
attacker's browser went on to "signed in as alice" and approved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from nextcloud_mcp_server.auth.login_flow import LoginFlowConsent
from nextcloud_mcp_server.authz import signin_flow
from tests.authz_server import AuthzServer, Pkce
from tests.backends import Nextcloud
from tests.browser import Browser, Person, Screenshots
from tests.integration.test_authz_browser import loopback, nextcloud_signin_server

pytestmark = [pytest.mark.integration, pytest.mark.browser]


def _link_to_forward(person: Person, ours: str, nextcloud_url: str) -> str:
    """The Nextcloud address the person's sign-in gave them: the link on a Login Flow hand-off
    page (a page of ours), or else the first Nextcloud URL their browser was redirected to
    (OAuth2's authorize URL, carrying the state - the page it ends on does not)."""
    if person.page.url.startswith(ours):
        return str(person.page.locator("a[target=_blank]").get_attribute("href"))
    request = person.shown[-1].response.request
    chain = []
    while request is not None:
        chain.append(request.url)
        request = request.redirected_from
    return next(url for url in reversed(chain) if url.startswith(nextcloud_url))


async def _until_no_login_flow_is_polled(server: AuthzServer) -> None:
    """Until every Login Flow poll has ended: a granted flow binds its request before it ends."""
    provider = server.runtime.consent_providers["login-flow-v2"]
    assert isinstance(provider, LoginFlowConsent)
    deadline = asyncio.get_running_loop().time() + 30
    while provider.waiting:
        assert asyncio.get_running_loop().time() < deadline, "a Login Flow poll never ended"
        await asyncio.sleep(0.2)


async def test_a_forwarded_sign_in_link_gets_its_sender_no_access_to_the_victims_account(
    real_nextcloud: Nextcloud,
    browser: Browser,
    screenshots: Screenshots,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(signin_flow, "REFRESH_SECONDS", 600)  # every page shown is one captured
    async with (
        browser.person("mallory", screenshots) as mallory,
        browser.person("alice", screenshots) as alice,
        loopback() as box,
    ):
        with nextcloud_signin_server(
            real_nextcloud, tmp_path / "store.sqlite3", nextcloud_consent_provider="login-flow-v2"
        ) as server:
            client = server.register(box.url, client_name="Mallory's helper")
            asked = server.authorize(client["client_id"], box.url, Pkce.new())
            assert asked.status_code == 302, asked.text
            signin = asked.headers["location"]
            request_id = parse_qs(urlsplit(signin).query)["request"][0]
            await mallory.open(signin, "his sign-in")
            link = await browser.run(_link_to_forward, mallory, server.base, real_nextcloud.url)

            connect = await alice.open(link, "the forwarded link at nextcloud")
            await alice.click("Log in", "nextcloud login form")
            grant = await alice.sign_in("alice", real_nextcloud.alice.password, "nextcloud grant access")
            landed = await alice.click("Grant access", "where nextcloud sends her")
            await _until_no_login_flow_is_polled(server)

            wanted = f"{server.base}/oauth/consent?request={request_id}"
            mallory_sees = await mallory.open(wanted, "the consent page he hopes for")
            request = server.run(server.runtime.authorization_requests.get(request_id))
            store = server.runtime.store
            assert store is not None
            alice_grant = server.run(store.get_grant("alice"))
            pending = server.run(store.grant_subjects("authz-pending:"))
            audit = server.run(store.audit_events("alice"))
    assert real_nextcloud.instance is not None
    tokens = real_nextcloud.instance.app_tokens("alice")
    assert "alice" not in mallory_sees.text, f"the sender was shown: {mallory_sees.text}"
    assert "Approve" not in mallory_sees.text
    assert "Sign in first" in mallory_sees.text
    assert request is not None
    assert request.user_id is None  # the request never learnt who signed in
    assert box.landed.empty()  # no code, nor an error, reached the sender's client
    assert alice_grant is None
    assert pending == []
    # Nextcloud made an app token when she granted access; it is deleted, and the attempt audited
    assert [name for name in tokens.values() if name.startswith("MCP server")] == []
    assert [event.event for event in audit] == ["refused"]
    assert "Connect to your account" in connect.text
    assert "Account access" in grant.text
    assert landed.status == 403
    assert "Open this in the browser you signed in with" in landed.text
    assert "If someone sent you the link, they got no access to your account." in landed.text
    assert landed.url.startswith(f"{server.base}/oauth/callback-nextcloud?")
