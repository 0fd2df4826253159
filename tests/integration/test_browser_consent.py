"""Consent in a real browser against the real Nextcloud: the -32042 link followed in Debian's
Chromium through Nextcloud's own login and grant pages, for both Nextcloud consent providers.

The MCP client is the SDK's ClientSession (URL elicitation capable), authenticated to this server
by the test IdP; the IdP's `preferred_username` is the Nextcloud user. Every page the person sees
is kept as a screenshot (test-artifacts/screenshots/<test>/).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import MCPError, UrlElicitationRequiredError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from tests.backends import Login, Nextcloud
from tests.browser import Browser, Person, Screenshots, Seen
from tests.mcp_clients import http_session, structured
from tests.offline import Completions, OfflineServer, real_offline_server
from tests.oidc import IdP

pytestmark = [pytest.mark.integration, pytest.mark.browser]

PROVIDERS = ["login-flow-v2", "nextcloud-oauth2"]


@pytest.fixture(params=PROVIDERS)
def server(
    request: pytest.FixtureRequest, real_nextcloud: Nextcloud, idp: IdP, tmp_path: Path
) -> Iterator[OfflineServer]:
    with real_offline_server(real_nextcloud, idp, tmp_path / "store.sqlite3", request.param) as running:
        yield running


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def _consent_url(session: Any, tool: str = "nc_notes_list_notes") -> tuple[str, str, str]:
    """Call a tool without a grant: (consent URL, elicitation id, message) of the -32042 error."""
    with pytest.raises(MCPError) as raised:
        await session.call_tool(tool, {})
    assert raised.value.code == -32042, raised.value
    [request] = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
    return request.url, request.elicitation_id, request.message


async def _grant_in_nextcloud(
    person: Person, url: str, login: Login, *, signed_in: bool = False, last: str = "connected"
) -> Seen:
    """The person opens the consent link, signs in on Nextcloud's login form (unless their browser
    still has a Nextcloud session) and clicks Grant access; the last page they see."""
    picker = await person.open(url, "connect to your account")
    assert "Connect to your account" in picker.text, picker.text
    if signed_in:
        grant = await person.click("Log in", "grant access")
    else:
        form = await person.click("Log in", "login form")
        assert "/login?redirect_url=" in form.url, form.url
        grant = await person.sign_in(login.user, login.password, "grant access")
    assert "Account access" in grant.text, grant.text
    assert f"Currently logged in as {login.display_name} ({login.user})" in grant.text, grant.text
    return await person.click("Grant access", last)


async def _error_code(session: Any) -> int | None:
    """None when listing notes works; else the code of the MCP error it raised."""
    try:
        structured(await session.call_tool("nc_notes_list_notes", {}))
    except MCPError as exc:
        return exc.code
    return None


def _tokens(nextcloud: Nextcloud, user: str) -> dict[int, str]:
    """The user's app passwords and OAuth2 tokens as Nextcloud has them: id -> name (browser
    sessions, type 0, are left out: signing in to grant access makes one)."""
    assert nextcloud.instance is not None
    return nextcloud.instance.app_tokens(user)


def _assert_our_page(seen: Seen, status: int, *texts: str) -> None:
    """One of this server's own pages: rendered as expected, with its security headers."""
    assert seen.status == status, (seen.status, seen.text)
    for text in texts:
        assert text in seen.text, seen.text
    headers = seen.headers
    assert headers["content-type"].startswith("text/html"), headers
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy, policy
    assert "frame-ancestors 'none'" in policy, policy
    assert "script-src" not in policy, policy
    assert "unsafe-inline" not in policy, policy


async def _session(server: OfflineServer, user: str, completions: Completions) -> Any:
    return http_session(
        server.mcp,
        headers=server.headers(user),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    )


async def test_consent_in_the_browser_gives_the_client_its_real_notes_until_revoked(
    server: OfflineServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """-32042 -> Nextcloud's login form and Grant access in Chromium -> the completion notification
    -> the retried call returns the notes that are really in Nextcloud. The used link and a forged
    callback then show our own error pages; revoke_nextcloud_access deletes the credential at
    Nextcloud."""
    provider = server.settings.nextcloud_consent_provider
    admin = real_nextcloud.admin
    real_nextcloud.add_note(admin, title="Shopping", content="milk, bread")
    before = _tokens(real_nextcloud, "admin")
    completions = Completions()
    async with await _session(server, "admin", completions) as session:
        url, elicitation_id, _ = await _consent_url(session)
        async with browser.person("admin", screenshots) as person:
            last = await _grant_in_nextcloud(person, url, admin)
            if provider == "login-flow-v2":  # Nextcloud's own last page
                assert "Account connected" in last.text, last.text
            else:  # ours, after Nextcloud's redirect to the callback
                assert last.url.startswith(f"{server.base}/oauth/callback-nextcloud?"), last.url
                _assert_our_page(last, 200, "Connected", "Your Nextcloud is connected")
                assert await person.style("h1", "color") == "rgb(10, 125, 50)"  # the hashed style applied
                used = await person.open(last.url, "callback again")
                _assert_our_page(used, 400, "This sign-in cannot be completed", "already used")
            with anyio.fail_after(30):
                await completions.event(elicitation_id).wait()
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))
            again = await person.open(url, "consent link again")
            _assert_our_page(again, 400, "This link cannot be used", "ask again")
            assert await person.style("h1", "color") == "rgb(176, 0, 32)"
            forged_url = f"{server.base}/oauth/callback-nextcloud?state=forged&code=x"
            forged = await person.open(forged_url, "forged callback")
            _assert_our_page(forged, 400, "This sign-in cannot be completed", "did not come from this server")
        assert not [m for m in person.console if "Content Security Policy" in m], person.console
        issued = {i: n for i, n in _tokens(real_nextcloud, "admin").items() if i not in before}
        assert len(issued) == 1, issued
        revoked = structured(await session.call_tool("revoke_nextcloud_access", {}))
        after = _tokens(real_nextcloud, "admin")
        await _consent_url(session)  # not connected any more: asked again
    assert [n["title"] for n in notes["notes"]] == ["Shopping"]
    assert revoked == {"revoked": True, "at_provider": True}
    assert after == before
    assert server.grants() == []


async def test_a_consent_given_by_another_account_is_refused_and_undone(
    server: OfflineServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """admin's assistant asks; alice signs in and grants. Nothing is connected, what Nextcloud
    issued for alice is deleted there again, and the refusal is explained (on our page, or for
    Login Flow v2, whose last page is Nextcloud's, by the next tool call) with what to do: the
    browser is still signed in to Nextcloud as alice, so the next link would go straight to
    granting as alice again."""
    provider = server.settings.nextcloud_consent_provider
    alice = real_nextcloud.alice
    before = _tokens(real_nextcloud, "alice")
    completions = Completions()
    async with await _session(server, "admin", completions) as session:
        url, elicitation_id, _ = await _consent_url(session)
        async with browser.person("alice", screenshots) as person:
            last = await _grant_in_nextcloud(person, url, alice, last="refused")
            if provider == "login-flow-v2":
                assert "Account connected" in last.text, last.text  # Nextcloud cannot know better
                with anyio.fail_after(30):  # the session is told; the next call says why
                    await completions.event(elicitation_id).wait()
            else:
                _assert_our_page(
                    last,
                    403,
                    "Signed in as someone else",
                    "as alice, but your assistant acts for admin",
                    "Sign out of Nextcloud first",
                )
            url, _, message = await _consent_url(session)
            picker = await person.open(url, "connect again")
            assert "Connect to your account" in picker.text, picker.text
            still = await person.click("Log in", "grant access again")
            assert "Currently logged in as Alice (alice)" in still.text, still.text
    if provider == "login-flow-v2":
        assert "The last attempt failed: consent came from Nextcloud user alice, expected admin" in message
        assert "sign out of Nextcloud in your browser first" in message, message
    assert _tokens(real_nextcloud, "alice") == before
    assert server.grants() == []


async def test_a_credential_deleted_in_nextcloud_leads_to_a_fresh_consent(
    server: OfflineServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """The credential is deleted in Nextcloud (occ): once Nextcloud stops accepting it (php-fpm
    caches tokens for up to ~10 s: that cache is emptied rather than waited for), the next call
    asks for consent again, and granting it in the browser (still signed in to Nextcloud) connects
    again."""
    admin = real_nextcloud.admin
    real_nextcloud.add_note(admin, title="Plans", content="ship it")
    before = _tokens(real_nextcloud, "admin")
    completions = Completions()
    async with await _session(server, "admin", completions) as session:
        url, elicitation_id, _ = await _consent_url(session)
        async with browser.person("admin", screenshots) as person:
            await _grant_in_nextcloud(person, url, admin)
            with anyio.fail_after(30):
                await completions.event(elicitation_id).wait()
            structured(await session.call_tool("nc_notes_list_notes", {}))
            [issued] = [i for i in _tokens(real_nextcloud, "admin") if i not in before]
            assert real_nextcloud.instance is not None
            real_nextcloud.instance.occ("user:auth-tokens:delete", "admin", str(issued))
            # php-fpm's cache holds a checked token for up to ~10 s: emptied now, as it would empty
            real_nextcloud.instance.forget_cached_state()
            with anyio.fail_after(60):  # until Nextcloud stops accepting it
                while (code := await _error_code(session)) is None:
                    await anyio.sleep(0.5)
            assert code == -32042
            assert server.grants() == []
            url, elicitation_id, _ = await _consent_url(session)
            await _grant_in_nextcloud(person, url, admin, signed_in=True, last="connected again")
            with anyio.fail_after(30):
                await completions.event(elicitation_id).wait()
        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Plans"]
    assert server.grants() == ["admin"]
    assert issued not in _tokens(real_nextcloud, "admin")


@pytest.mark.parametrize("server", ["nextcloud-oauth2"], indirect=True)
async def test_nextcloud_oauth2_refuses_a_login_name_nextcloud_would_not_take_back(
    server: OfflineServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """Signed in as "ADMIN": Nextcloud's form accepts it, but the token it issues then works as a
    Basic password (which the Notes API needs) only with "ADMIN", a name this server cannot learn.
    Instead of connecting something that fails on every Notes call and asks for consent again
    each time, the consent is refused on our page with what to do, and the token is deleted."""
    admin = real_nextcloud.admin
    before = _tokens(real_nextcloud, "admin")
    shouting = dataclasses.replace(admin, user="ADMIN")
    completions = Completions()
    async with await _session(server, "admin", completions) as session:
        url, _, _ = await _consent_url(session)
        async with browser.person("admin", screenshots) as person:
            await person.open(url, "connect to your account")
            await person.click("Log in", "login form")
            await person.sign_in(shouting.user, admin.password, "grant access")
            last = await person.click("Grant access", "refused")
        _assert_our_page(
            last, 403, "Sign in with your user name", "Sign out of Nextcloud first, then sign in as admin"
        )
    assert server.grants() == []
    assert _tokens(real_nextcloud, "admin") == before


async def test_consent_signed_in_with_the_email_address_in_the_browser(
    server: OfflineServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """Nextcloud 29 in Chromium, alice signing in with her e-mail address (on 34 the same over
    HTTP: test_login_names.py). 29 binds the new credential to the user id, 34 to the address;
    the server keeps whichever name the credential works with."""
    nextcloud = real_nextcloud
    with httpx.Client(base_url=nextcloud.url, auth=(nextcloud.admin.user, nextcloud.admin.password)) as admin:
        answer = admin.put(
            "/ocs/v2.php/cloud/users/alice",
            data={"key": "email", "value": "alice@example.com"},
            headers={"OCS-APIRequest": "true", "Accept": "application/json"},
        )
    assert answer.status_code == 200, answer.text
    nextcloud.add_note(nextcloud.alice, title="Tulips", content="plant in autumn")
    completions = Completions()
    async with await _session(server, "alice", completions) as session:
        url, elicitation_id, _ = await _consent_url(session)
        by_email = dataclasses.replace(nextcloud.alice, user="alice@example.com")
        async with browser.person("alice", screenshots) as person:
            picker = await person.open(url, "connect to your account")
            assert "Connect to your account" in picker.text, picker.text
            await person.click("Log in", "login form")
            grant = await person.sign_in(by_email.user, by_email.password, "grant access")
            assert "Account access" in grant.text, grant.text
            await person.click("Grant access", "connected")
        with anyio.fail_after(30):
            await completions.event(elicitation_id).wait()
        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Tulips"]
