"""Issue 31 #1 over HTTP, against the Nextcloud double: someone starts a sign-in and forwards the
Nextcloud link it gives them; the person who follows it signs in - and the sender must get nothing.

The sign-in a server offers by default is Nextcloud's OAuth2 app, whose answer is accepted only in
the browser that started; NEXTCLOUD_CONSENT_PROVIDER=login-flow-v2 no longer makes the sign-in a
Login Flow (its link works in any browser) unless AUTH_SERVER_LOGIN_FLOW_SIGNIN=true says so.
The same attack in Chromium against the real Nextcloud: tests/integration/test_signin_forwarding.py.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from nextcloud_mcp_server.auth.login_flow import LoginFlowConsent
from nextcloud_mcp_server.authz.signin import BROWSER_COOKIE
from nextcloud_mcp_server.nextcloud.login import AUTHORIZE_PATH
from tests.authz.signin_server import ALICE_PASSWORD, Server, new_browser, serve
from tests.nextcloud_double import NextcloudDouble
from tests.offline import sign_in_at_nextcloud

pytestmark = pytest.mark.integration


async def _link_to_forward(mallory: httpx.AsyncClient, server: Server, request_id: str) -> str:
    """The Nextcloud address Mallory's sign-in gives him: the Login Flow link of a hand-off page,
    or where the sign-in redirects (Nextcloud's OAuth2 authorize URL, state and all)."""
    answer = await mallory.get(server.signin_url(request_id))
    if answer.status_code == 200:
        link = re.search(r"href='([^']+)' target=_blank", answer.text)
        assert link is not None, answer.text
        return html.unescape(link.group(1))
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


async def _until_no_login_flow_is_polled(server: Server) -> None:
    """Until every Login Flow poll has ended (a granted flow binds its request first)."""
    provider = server.runtime.consent_providers["login-flow-v2"]
    assert isinstance(provider, LoginFlowConsent)
    deadline = time.monotonic() + 30
    while provider.waiting:
        assert time.monotonic() < deadline, "a Login Flow poll never ended"
        await asyncio.sleep(0.1)


async def test_with_an_oauth2_client_the_sign_in_is_nextcloud_oauth2_even_if_consent_is_login_flow(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """NEXTCLOUD_CONSENT_PROVIDER=login-flow-v2 names where a later consent goes; the sign-in
    itself goes to Nextcloud's OAuth2 app with a state bound to this browser."""
    with serve(
        double, double_url, tmp_path / "store.sqlite3", nextcloud_consent_provider="login-flow-v2"
    ) as server:
        request = await server.new_request()
        async with new_browser() as browser:
            answer = await browser.get(server.signin_url(request.id))
    assert answer.status_code == 303, answer.text
    target = urlsplit(answer.headers["location"])
    assert target.path == AUTHORIZE_PATH
    assert parse_qs(target.query)["state"]


async def test_a_forwarded_sign_in_link_gets_the_sender_nothing(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """Mallory starts a sign-in and forwards its Nextcloud link; alice signs in and grants access
    in her own browser. Her browser is told this step is not its own; Mallory's browser is never
    shown a consent page for alice, and nothing of alice's is kept."""
    with serve(
        double, double_url, tmp_path / "store.sqlite3", nextcloud_consent_provider="login-flow-v2"
    ) as server:
        request = await server.new_request()
        async with new_browser() as mallory:
            link = await _link_to_forward(mallory, server, request.id)
            alice_saw = await asyncio.to_thread(sign_in_at_nextcloud, link, "alice", ALICE_PASSWORD)
            await _until_no_login_flow_is_polled(server)
            mallory_sees = await mallory.get(server.consent_url(request.id))
        assert server.runtime.store is not None
        pending = await server.runtime.store.grant_subjects("authz-pending:")
        alice_grant = await server.grant("alice")
        audit = await server.audit()
    assert "alice" not in mallory_sees.text, mallory_sees.text
    assert mallory_sees.status_code == 400
    assert "Sign in first" in mallory_sees.text
    assert alice_saw.status_code == 403
    assert "Open this in the browser you signed in with" in alice_saw.text
    assert "If someone sent you the link, they got no access to your account." in alice_saw.text
    assert server.requests.signed == []
    assert server.requests.approved == []
    assert pending == []
    assert alice_grant is None
    assert server.double.login.deleted == ["alice"]  # what Nextcloud made for her grant is gone
    assert audit == ["refused"]


async def test_the_login_flow_hand_off_page_says_never_to_forward_its_link(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """Where a Login Flow sign-in was accepted, the page with the link warns its reader."""
    with serve(
        double,
        double_url,
        tmp_path / "store.sqlite3",
        nextcloud_consent_provider="login-flow-v2",
        auth_server_login_flow_signin=True,
    ) as server:
        request = await server.new_request()
        async with new_browser() as browser:
            handoff = await browser.get(server.signin_url(request.id))
    assert handoff.status_code == 200, handoff.text
    assert "<strong>Never send this link to anyone</strong>, and never open one that someone sent you" in (
        handoff.text
    )
    assert "hands their Nextcloud account to the browser showing this page" in handoff.text


def _grant_at_nextcloud(link: str, user: str, password: str) -> str:
    """A person follows `link` to the double's login, signs in and grants; where Nextcloud then
    sends their browser (our callback, not followed: it is on the public https address)."""
    with httpx.Client(follow_redirects=True, timeout=15) as browser:
        page = browser.get(link)
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        token = re.search(r'name="token" value="([^"]+)"', page.text)
        assert action is not None, page.text[:300]
        assert token is not None, page.text[:300]
        form = {"token": html.unescape(token.group(1)), "user": user, "password": password}
        target = page.url.join(html.unescape(action.group(1)))
        answer = browser.post(target, data=form, follow_redirects=False)
    assert answer.status_code in (302, 303), answer.text[:300]
    return answer.headers["location"]


async def test_behind_https_a_cookie_planted_by_another_host_does_not_bind_the_victims_answer(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """Cookie tossing: a host under the same parent domain (Domain=example.com) plants Mallory's
    binding value in alice's browser, then sends her to his forwarded link. Behind https only the
    __Host- prefixed cookie counts, and no other host can set one of those."""
    public = "https://mcp.example.com"
    with serve(
        double, double_url, tmp_path / "s.sqlite3", public_base=public, mcp_allowed_hosts="mcp.example.com"
    ) as server:
        request = await server.new_request()
        async with new_browser() as mallory, new_browser() as alice:
            started = await mallory.get(server.signin_url(request.id))
            name, _, rest = started.headers["set-cookie"].partition("=")
            his = {"Cookie": f"{name}={rest.split(';')[0]}"}  # Secure: sent by hand over this http
            back = await asyncio.to_thread(
                _grant_at_nextcloud, started.headers["location"], "alice", ALICE_PASSWORD
            )
            assert back.startswith(f"{public}/oauth/callback-nextcloud?")
            planted = {"Cookie": f"{BROWSER_COOKIE}={rest.split(';')[0]}"}
            landed = await alice.get(f"{server.base}{back[len(public) :]}", headers=planted)
            mallory_sees = await mallory.get(server.consent_url(request.id), headers=his)
        assert server.runtime.store is not None
        pending = await server.runtime.store.grant_subjects("authz-pending:")
    assert "alice" not in mallory_sees.text, mallory_sees.text
    assert landed.status_code == 403
    assert server.requests.signed == []
    assert pending == []
