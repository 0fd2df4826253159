"""Sign-in at Nextcloud and the consent page over HTTP, against the Nextcloud double's OAuth2 app
and a real SQLite store: every branch a person (or an attacker) can reach.

The authorization requests are the protocol side's `StoredAuthorizationRequests` on the same
store; the person's browser is httpx with its own cookie jar (tests/offline.sign_in_at_nextcloud
fills the double's login form).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.applications import Starlette

from nextcloud_mcp_server.auth.consent import consent_routes
from nextcloud_mcp_server.authz.requests import (
    CONSENT_PATH,
    SIGNIN_PATH,
    AuthorizationRequest,
    NewRequest,
    StoredAuthorizationRequests,
)
from nextcloud_mcp_server.authz.service import open_connection
from nextcloud_mcp_server.authz.signin import (
    BROWSER_COOKIE,
    csrf_token,
    finish_signin,
    signin_routes,
    sweep_pending,
)
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.runtime import Runtime
from tests.conftest import ADMIN_PASSWORD
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.offline import KEY, sign_in_at_nextcloud
from tests.processes import free_port

pytestmark = pytest.mark.integration

ALICE_PASSWORD = "alice-login-password"
CLIENT_NAME = "Evil <script>alert(1)</script> Assistant"
REDIRECT = "https://client.example/cb"


class Recorded(StoredAuthorizationRequests):
    """The protocol side's requests on the store, remembering what the pages did with them."""

    def __init__(self, db: Any, issuer: str) -> None:
        super().__init__(db, issuer, clock=self.now)
        self.offset = 0.0
        self.signed: list[tuple[str, str]] = []
        self.approved: list[str] = []
        self.declined: list[str] = []

    def now(self) -> float:
        return time.time() + self.offset

    def expire_all(self) -> None:
        self.offset = self.ttl + 1

    async def create_for(self, name: str, redirect_uri: str, scopes: tuple[str, ...]) -> AuthorizationRequest:
        new = NewRequest("client-1", name, redirect_uri, True, scopes, "https://mcp.test/mcp", "c" * 43, "st")
        return await self.create(new)

    async def signed_in(self, request_id: str, user_id: str) -> AuthorizationRequest:
        self.signed.append((request_id, user_id))
        return await super().signed_in(request_id, user_id)

    async def approve(self, request_id: str) -> str:
        answer = await super().approve(request_id)
        self.approved.append(request_id)
        return answer

    async def decline(self, request_id: str) -> str:
        answer = await super().decline(request_id)
        self.declined.append(request_id)
        return answer


class RecordingRuntime(Runtime):
    """The runtime, with the recorded requests as its authorization requests."""

    recorded: Recorded
    loop: asyncio.AbstractEventLoop

    @property
    def authorization_requests(self) -> Recorded:
        return self.recorded


@dataclass
class Server:
    base: str
    runtime: Runtime
    requests: Recorded
    double: NextcloudDouble

    async def new_request(
        self, scopes: tuple[str, ...] = ("notes:read", "calendar:write")
    ) -> AuthorizationRequest:
        return await self.requests.create_for(CLIENT_NAME, REDIRECT, scopes)

    def signin_url(self, request_id: str) -> str:
        return f"{self.base}{SIGNIN_PATH}?request={request_id}"

    def consent_url(self, request_id: str) -> str:
        return f"{self.base}{CONSENT_PATH}?request={request_id}"

    async def grant(self, subject: str) -> Any:
        assert self.runtime.store is not None
        return await self.runtime.store.get_grant(subject)

    async def on_server(self, coroutine: Any) -> Any:
        """Run `coroutine` on the server's event loop (its HTTP pool lives there)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.runtime.loop))

    async def audit(self) -> list[str]:
        assert self.runtime.store is not None
        return [e.event for e in reversed(await self.runtime.store.audit_events("alice"))]


def _settings(double: NextcloudDouble, double_url: str, base: str, store: Path, **overrides: Any) -> Any:
    public = overrides.pop("public_base", base)
    client_id, secret = double.login.add_client("MCP server", f"{public}/oauth/callback-nextcloud")
    return load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer="https://idp.invalid",
        mcp_public_url=f"{public}/mcp",
        enable_offline_access=True,
        token_encryption_key=KEY,
        store_path=store,
        **{
            "nextcloud_consent_provider": "nextcloud-oauth2",
            "nextcloud_oauth2_client_id": client_id,
            "nextcloud_oauth2_client_secret": secret,
            **overrides,
        },
    )


@contextlib.contextmanager
def _serve(double: NextcloudDouble, double_url: str, store: Path, **overrides: Any) -> Iterator[Server]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = _settings(double, double_url, base, store, **overrides)
    runtime = RecordingRuntime(settings)
    requests = Recorded(None, base)
    runtime.recorded = requests

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        runtime.loop = asyncio.get_running_loop()
        async with runtime:
            assert runtime.store is not None
            requests._db = await open_connection(runtime.store)  # type: ignore[attr-defined]
            yield

    app = Starlette(routes=signin_routes(runtime) + consent_routes(runtime, finish_signin), lifespan=lifespan)
    with serve_in_thread(app, port=port):
        yield Server(base, runtime, requests, double)


@pytest.fixture
def server(double: NextcloudDouble, double_url: str, tmp_path: Path) -> Iterator[Server]:
    with _serve(double, double_url, tmp_path / "store.sqlite3") as running:
        yield running


def _browser() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=15)


async def _sign_in(
    browser: httpx.AsyncClient, server: Server, request_id: str, user: str = "alice"
) -> httpx.Response:
    """Open the sign-in link, sign in at the double and grant; the answer of our callback."""
    to_nextcloud = await browser.get(server.signin_url(request_id))
    assert to_nextcloud.status_code == 303, to_nextcloud.text
    page = await browser.get(to_nextcloud.headers["location"], follow_redirects=True)
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    token = re.search(r'name="token" value="([^"]+)"', page.text)
    assert action is not None, page.text[:300]
    assert token is not None, page.text[:300]
    password = ALICE_PASSWORD if user == "alice" else ADMIN_PASSWORD
    answer = await browser.post(
        page.url.join(action.group(1)), data={"token": token.group(1), "user": user, "password": password}
    )
    assert answer.status_code in (302, 303), answer.text[:300]
    return await browser.get(answer.headers["location"])


async def _consent_form(browser: httpx.AsyncClient, server: Server, request_id: str) -> dict[str, str]:
    page = await browser.get(server.consent_url(request_id))
    assert page.status_code == 200, page.text
    return dict(re.findall(r"<input type=hidden name=(\w+) value='([^']*)'>", page.text))


async def test_sign_in_then_approve_stores_the_grant_and_answers_the_client(server: Server) -> None:
    request = await server.new_request()
    async with _browser() as browser:
        back = await _sign_in(browser, server, request.id)
        assert back.status_code == 303
        assert back.headers["location"] == f"{CONSENT_PATH}?request={request.id}"
        cookie = next(c for c in browser.cookies.jar if c.name == BROWSER_COOKIE)
        assert cookie.path == "/oauth"
        assert cookie.has_nonstandard_attr("HttpOnly")
        assert cookie.secure is False  # http in this test; https origins get Secure
        page = await browser.get(server.consent_url(request.id))
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        await _sign_in(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        await _sign_in(browser, server, request.id)
        assert server.double.login.oauth_grants("alice") == 1
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        await _sign_in(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as alice, _browser() as mallory:
        await _sign_in(alice, server, request.id)
        fields = await _consent_form(alice, server, request.id)
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
    async with _browser() as alice:
        to_nextcloud = await alice.get(server.signin_url(request.id))
    state = parse_qs(urlsplit(to_nextcloud.headers["location"]).query)["state"][0]
    async with _browser() as mallory:
        back = await mallory.get(
            f"{server.base}/oauth/callback-nextcloud", params={"state": state, "code": "x"}
        )
    assert back.status_code == 403
    assert (await server.requests.get(request.id)) is not None
    assert server.requests.signed == []


async def test_nextcloud_saying_no_leaves_the_request_unchanged(server: Server) -> None:
    request = await server.new_request()
    async with _browser() as browser:
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
    async with _browser() as browser:
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
    async with _browser() as browser:
        unknown = await browser.get(server.signin_url("no-such-request"))
        await _sign_in(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser, _browser() as other:
        await _sign_in(browser, server, request.id)
        again = await browser.get(server.signin_url(request.id))
        elsewhere = await other.get(server.signin_url(request.id))
    assert again.status_code == 303
    assert again.headers["location"] == f"{CONSENT_PATH}?request={request.id}"
    assert elsewhere.status_code == 400
    assert "already signed in" in elsewhere.text
    assert len(server.requests.signed) == 1


async def test_an_oversized_or_odd_answer_changes_nothing(server: Server) -> None:
    request = await server.new_request()
    async with _browser() as browser:
        await _sign_in(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
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
    with _serve(double, double_url, tmp_path / "s.sqlite3", auth_server_grant_at_signin=False) as server:
        request = await server.new_request()
        async with _browser() as browser:
            await _sign_in(browser, server, request.id)
            assert double.login.oauth_grants("alice") == 0  # deleted as soon as alice was known
            fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        for request in (answered, unanswered):
            await _sign_in(browser, server, request.id)
        fields = await _consent_form(browser, server, answered.id)
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
    with _serve(
        double, double_url, tmp_path / "s.sqlite3", public_base=public, mcp_allowed_hosts="mcp.example.com"
    ) as server:
        request = await server.new_request()
        async with _browser() as browser:
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


@pytest.fixture
def flow_server(double: NextcloudDouble, double_url: str, tmp_path: Path) -> Iterator[Server]:
    """A Login Flow v2 sign-in, explicitly accepted (AUTH_SERVER_LOGIN_FLOW_SIGNIN; ADR 0033)."""
    with _serve(
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
    async with _browser() as browser:
        handoff = await _sign_in_by_login_flow(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        await _sign_in_by_login_flow(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "decline"})
    assert answer.status_code == 303
    assert server.requests.declined == [request.id]
    assert await server.grant("alice") is None
    assert server.double.login.deleted == ["alice"]
    assert set(server.double.accounts["alice"].app_passwords) == before


async def test_login_flow_hand_off_page_belongs_to_one_browser(flow_server: Server) -> None:
    server = flow_server
    request = await server.new_request()
    async with _browser() as alice, _browser() as mallory:
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
    with _serve(
        double,
        double_url,
        tmp_path / "s.sqlite3",
        nextcloud_consent_provider="login-flow-v2",
        auth_server_login_flow_signin=True,
        auth_server_grant_at_signin=False,
    ) as server:
        before = set(double.accounts["alice"].app_passwords)
        request = await server.new_request()
        async with _browser() as browser:
            await _sign_in_by_login_flow(browser, server, request.id)
            assert double.login.deleted == ["alice"]  # as soon as alice was known
            fields = await _consent_form(browser, server, request.id)
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
    async with _browser() as browser:
        await _sign_in_by_login_flow(browser, server, request.id)
        fields = await _consent_form(browser, server, request.id)
        answer = await browser.post(f"{server.base}{CONSENT_PATH}", data={**fields, "decision": "approve"})
    assert answer.status_code == 303
    assert (await server.grant("alice")).login == "alice"
