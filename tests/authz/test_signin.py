"""Sign-in at Nextcloud and the consent page over HTTP, against the Nextcloud double's OAuth2 app
and a real SQLite store: every branch a person (or an attacker) can reach.

The authorization requests are the protocol side's `StoredAuthorizationRequests` on the same
store; the person's browser is httpx with its own cookie jar (tests/offline.sign_in_at_nextcloud
fills the double's login form).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from nextcloud_mcp_server.authz.requests import (
    CONSENT_PATH,
)
from nextcloud_mcp_server.authz.signin import (
    BROWSER_COOKIE,
    csrf_token,
    sweep_pending,
)
from tests.authz.signin_server import (
    REDIRECT,
    Server,
    consent_form,
    new_browser,
    serve,
    sign_in,
)
from tests.nextcloud_double import NextcloudDouble

pytestmark = pytest.mark.integration


@pytest.fixture
def server(double: NextcloudDouble, double_url: str, tmp_path: Path) -> Iterator[Server]:
    with serve(double, double_url, tmp_path / "store.sqlite3") as running:
        yield running


async def test_sign_in_then_approve_stores_the_grant_and_answers_the_client(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        back = await sign_in(browser, server, request.id)
        assert back.status_code == 303
        assert back.headers["location"] == f"{CONSENT_PATH}?request={request.id}"
        cookie = next(c for c in browser.cookies.jar if c.name == BROWSER_COOKIE)
        assert cookie.path == "/oauth"
        assert cookie.has_nonstandard_attr("HttpOnly")
        assert cookie.secure is False  # http in this test; https origins get Secure
        page = await browser.get(server.consent_url(request.id))
        fields = await consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
    assert page.status_code == 200
    assert "Evil &lt;script&gt;alert(1)&lt;/script&gt; Assistant" in page.text
    assert "<script>" not in page.text
    assert "Read your notes" in page.text
    assert "Add, change and delete events and tasks" in page.text
    assert "<strong><bdi>alice</bdi></strong>" in page.text  # isolated (ADR 0034)
    assert "<strong><bdi>client.example</bdi></strong>" in page.text
    csp = page.headers["content-security-policy"]
    assert "form-action 'self' https://client.example;" in csp
    assert "frame-ancestors 'none'" in csp
    assert "script-src" not in csp
    assert "default-src 'none'" in csp
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["referrer-policy"] == "same-origin"  # no-referrer would send Origin: null
    assert page.headers["x-content-type-options"] == "nosniff"
    assert answer.status_code == 303
    target = urlsplit(answer.headers["location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == REDIRECT
    assert parse_qs(target.query)["code"]
    assert server.requests.approved == [request.id]
    grant = await server.grant("alice")
    assert (grant.user_id, grant.provider, grant.kind) == ("alice", "nextcloud-oauth2", "refresh_token")
    assert server.double.login.oauth_grants("alice") == 1
    assert await server.audit() == ["signed_in", "granted", "approved"]


async def test_a_replayed_approval_changes_nothing(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        await sign_in(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        first = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
        again = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
        declined = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "decline"})
    assert first.status_code == 303
    assert again.status_code == declined.status_code == 400
    assert "cannot be used" in again.text
    assert server.requests.approved == [request.id]
    assert server.requests.declined == []
    assert server.double.login.oauth_grants("alice") == 1


async def test_decline_deletes_the_credential_at_nextcloud(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        await sign_in(browser, server, request.id)
        assert server.double.login.oauth_grants("alice") == 1
        fields = await consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "decline"})
    assert answer.status_code == 303
    assert parse_qs(urlsplit(answer.headers["location"]).query)["error"] == ["access_denied"]
    assert server.requests.declined == [request.id]
    assert await server.grant("alice") is None
    assert server.double.login.oauth_grants("alice") == 0
    assert "declined" in await server.audit()


@pytest.mark.parametrize("csrf", [None, "", "forged-token-forged-token-forged-token-xyz", "other-request"])
async def test_an_answer_without_the_right_csrf_token_is_refused(server: Server, csrf: str | None) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        await sign_in(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        if csrf is None:
            del fields["csrf"]
        elif csrf == "other-request":
            cookie = browser.cookies[BROWSER_COOKIE]
            fields["csrf"] = csrf_token("another-request-id", cookie)
        else:
            fields["csrf"] = csrf
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
        still = await browser.get(server.consent_url(request.id))
    assert answer.status_code == 403
    assert "did not come from the consent page" in answer.text
    assert still.status_code == 200  # nothing changed: the request can still be answered
    assert server.requests.approved == []
    assert await server.grant("alice") is None


async def test_another_browser_can_neither_see_nor_answer_the_consent_page(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as alice, new_browser() as mallory:
        await sign_in(alice, server, request.id)
        fields = await consent_form(alice, server, request.id)
        seen = await mallory.get(server.consent_url(request.id))
        mallory.cookies.set(BROWSER_COOKIE, "A" * 43, domain="127.0.0.1", path="/oauth")
        seen_with_cookie = await mallory.get(server.consent_url(request.id))
        answered = await mallory.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
    assert seen.status_code == seen_with_cookie.status_code == answered.status_code == 403
    assert "another browser" in seen.text
    assert server.requests.approved == []


async def test_nextcloud_answering_with_another_browser_is_refused(server: Server) -> None:
    """The callback with a sign-in state, but in a browser without the cookie that started it."""
    request = await server.new_request()
    async with new_browser() as alice:
        to_nextcloud = await alice.get(server.signin_url(request.id))
    state = parse_qs(urlsplit(to_nextcloud.headers["location"]).query)["state"][0]
    async with new_browser() as mallory:
        back = await mallory.get(
            f"{server.base}/oauth/callback-nextcloud", params={"state": state, "code": "x"}
        )
    assert back.status_code == 403
    assert (await server.requests.get(request.id)) is not None
    assert server.requests.signed == []


async def test_nextcloud_saying_no_leaves_the_request_unchanged(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        to_nextcloud = await browser.get(server.signin_url(request.id))
        state = parse_qs(urlsplit(to_nextcloud.headers["location"]).query)["state"][0]
        back = await browser.get(
            f"{server.base}/oauth/callback-nextcloud",
            params={"state": state, "error": "access_denied", "error_description": "<b>no</b>"},
        )
    assert back.status_code == 400
    assert "Nextcloud said: &lt;b&gt;no&lt;/b&gt;" in back.text
    assert server.requests.signed == []


async def test_a_wrong_or_replayed_state_is_refused(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        wrong = await browser.get(
            f"{server.base}/oauth/callback-nextcloud", params={"state": "nope", "code": "x"}
        )
        to_nextcloud = await browser.get(server.signin_url(request.id))
        state = parse_qs(urlsplit(to_nextcloud.headers["location"]).query)["state"][0]
        first = await browser.get(
            f"{server.base}/oauth/callback-nextcloud", params={"state": state, "error": "access_denied"}
        )
        replayed = await browser.get(
            f"{server.base}/oauth/callback-nextcloud", params={"state": state, "code": "x"}
        )
    assert wrong.status_code == replayed.status_code == 400
    assert "already used, has expired" in replayed.text
    assert first.status_code == 400


async def test_unknown_and_expired_requests_get_a_page_saying_so(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        unknown = await browser.get(server.signin_url("no-such-request"))
        await sign_in(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        server.requests.expire_all()
        expired_page = await browser.get(server.consent_url(request.id))
        expired_answer = await browser.post(
            f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"}
        )
        expired_signin = await browser.get(server.signin_url(request.id))
    for answer in (unknown, expired_page, expired_answer, expired_signin):
        assert answer.status_code == 400
        assert "It has expired, was already answered, or is unknown here" in answer.text
        assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert server.requests.approved == []


async def test_the_sign_in_link_again_goes_on_to_consent_only_in_the_same_browser(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser, new_browser() as other:
        await sign_in(browser, server, request.id)
        again = await browser.get(server.signin_url(request.id))
        elsewhere = await other.get(server.signin_url(request.id))
    assert again.status_code == 303
    assert again.headers["location"] == f"{CONSENT_PATH}?request={request.id}"
    assert elsewhere.status_code == 400
    assert "already signed in" in elsewhere.text
    assert len(server.requests.signed) == 1


async def test_an_oversized_or_odd_answer_changes_nothing(server: Server) -> None:
    request = await server.new_request()
    async with new_browser() as browser:
        await sign_in(browser, server, request.id)
        fields = await consent_form(browser, server, request.id)
        huge = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "pad": "x" * 10_000})
        odd = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "maybe"})
        still = await browser.get(server.consent_url(request.id))
    assert huge.status_code == 413
    assert odd.status_code == 400
    assert still.status_code == 200
    assert server.requests.approved == server.requests.declined == []


async def test_without_grant_at_sign_in_the_credential_is_deleted_at_once(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    with serve(double, double_url, tmp_path / "s.sqlite3", auth_server_grant_at_signin=False) as server:
        request = await server.new_request()
        async with new_browser() as browser:
            await sign_in(browser, server, request.id)
            assert double.login.oauth_grants("alice") == 0  # deleted as soon as alice was known
            fields = await consent_form(browser, server, request.id)
            answer = await browser.post(
                f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"}
            )
        assert answer.status_code == 303
        assert server.requests.approved == [request.id]
        assert await server.grant("alice") is None


async def test_unanswered_sign_ins_are_swept_and_their_credential_deleted_at_nextcloud(
    server: Server,
) -> None:
    answered, unanswered, live = [await server.new_request() for _ in range(3)]
    async with new_browser() as browser:
        for request in (answered, unanswered):
            await sign_in(browser, server, request.id)
        fields = await consent_form(browser, server, answered.id)
        await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
        assert server.double.login.oauth_grants("alice") == 2
        assert await server.on_server(sweep_pending(server.runtime)) == 0  # both still answerable
        server.requests.expire_all()
        swept = await server.on_server(sweep_pending(server.runtime))
    assert swept == 1
    assert server.double.login.oauth_grants("alice") == 1  # the approved one stays in use
    assert await server.grant("alice") is not None
    assert server.runtime.store is not None
    assert await server.runtime.store.grant_subjects("authz-pending:") == []
    assert "expired" in await server.audit()
    assert live.id not in server.requests.signed


async def test_behind_https_the_browser_cookie_is_secure(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """MCP_PUBLIC_URL on https (TLS ends at a proxy in front): the binding cookie is Secure and
    __Host- prefixed."""
    public = "https://mcp.example.com"
    with serve(
        double, double_url, tmp_path / "s.sqlite3", public_base=public, mcp_allowed_hosts="mcp.example.com"
    ) as server:
        request = await server.new_request()
        async with new_browser() as browser:
            to_nextcloud = await browser.get(server.signin_url(request.id))
    cookie = to_nextcloud.headers["set-cookie"]
    assert to_nextcloud.status_code == 303
    assert cookie.startswith(f"__Host-{BROWSER_COOKIE}=")  # only this origin itself can set it
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "secure", "path", "max-age", "samesite"} <= attributes
    assert "domain" not in attributes
    assert "Path=/;" in f"{cookie};"  # __Host- cookies must have Path=/
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    redirect_uri = parse_qs(urlsplit(to_nextcloud.headers["location"]).query)["redirect_uri"]
    assert redirect_uri == [f"{public}/oauth/callback-nextcloud"]
