"""Sign-in through Nextcloud's Login Flow v2, only where AUTH_SERVER_LOGIN_FLOW_SIGNIN=true accepts
its risk: the login link is not bound to any browser, so whoever signs in through a forwarded one
hands their account to the browser showing the hand-off page (docs/ADR/0033). The page says so.

The sign-in link shows a hand-off page of ours: a link that opens Nextcloud's login in a new tab,
and a page that reloads itself (meta refresh, no script) with `&wait=1`. A background task polls
the flow (`LoginFlowConsent.watch`, within LOGIN_FLOW_MAX_POLLERS); when Nextcloud hands out the
app password, OCS `cloud/user` names the user, the request is bound to them and the app password
waits as the pending grant of request and browser - in the store, so the reload finds it on any
replica and goes on to the consent page. The login link and a failure are remembered in this
process only: a reload that reaches another replica shows the waiting page without the link.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from nextcloud_mcp_server.auth.consent_providers import ConsentFailed, delete_at_nextcloud
from nextcloud_mcp_server.auth.login_flow import FLOW_LIFETIME
from nextcloud_mcp_server.authz.browser_binding import NO_CREDENTIAL, OTHER_BROWSER, bind, pending_subject
from nextcloud_mcp_server.authz.pages import TRY_AGAIN, error_page, handoff_page
from nextcloud_mcp_server.authz.requests import SIGNIN_PATH, AuthorizationRequest, RequestUnusable
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.storage.records import Grant

__all__ = ["FlowSignins"]

REFRESH_SECONDS = 3


@dataclass
class _Flow:
    browser_hash: str
    login_url: str
    until: float
    failure: str | None = None


class FlowSignins:
    """The Login Flow v2 sign-ins this process started, by request id."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._flows: dict[str, _Flow] = {}

    async def page(
        self, request: Request, pending: AuthorizationRequest, browser: str, browser_hash: str
    ) -> Response:
        """The hand-off page: starts the flow on the first visit, then shows how it goes."""

        self._prune()
        refresh = f"{SIGNIN_PATH}?{urlencode({'request': pending.id, 'wait': '1'})}"
        flow = self._flows.get(pending.id)
        if flow is not None and flow.browser_hash != browser_hash:
            return error_page(*OTHER_BROWSER, status=403)
        if flow is not None and flow.failure is not None:
            return error_page("You were not signed in", f"{flow.failure} {TRY_AGAIN}")
        if flow is None and request.query_params.get("wait") == "1":
            return handoff_page(login_url=None, refresh_url=refresh, every=REFRESH_SECONDS)
        if flow is None:
            try:
                flow = await self._start(pending, browser, browser_hash)
            except ConsentFailed as exc:
                return error_page(exc.title, f"{exc.message} {TRY_AGAIN}", status=exc.status)
        answer = handoff_page(login_url=flow.login_url, refresh_url=refresh, every=REFRESH_SECONDS)
        secure = self._runtime.settings.public_origin.startswith("https://")
        return bind(answer, browser, secure, pending.expires_at - time.time())

    def _prune(self) -> None:
        now = time.time()
        for request_id in [key for key, flow in self._flows.items() if flow.until < now]:
            del self._flows[request_id]

    async def _start(self, pending: AuthorizationRequest, browser: str, browser_hash: str) -> _Flow:
        provider = self._runtime.consent_providers["login-flow-v2"]
        started = await provider.start()
        deadline = min(pending.expires_at, time.time() + FLOW_LIFETIME)
        flow = _Flow(browser_hash, started.login_url, deadline + 60)
        self._flows[pending.id] = flow
        requests = self._runtime.authorization_requests

        async def wanted() -> bool:
            current = await requests.get(pending.id)
            return current is not None and current.user_id is None

        async def timed_out() -> None:
            flow.failure = "The Nextcloud sign-in was not completed in time."

        async def granted(login: str, password: str) -> None:
            flow.failure = await self._granted(pending.id, browser, login, password)

        provider.watch(started, deadline, f"signin-flow-{pending.id[:8]}", granted, wanted, timed_out)
        return flow

    async def _granted(self, request_id: str, browser: str, login: str, password: str) -> str | None:
        """Bind the user and keep the app password pending; a sentence for the person on failure."""
        runtime = self._runtime
        credential = BasicCredential(login, password)
        try:
            user = await OCSClient(runtime.http, credential).current_user()
        except NextcloudError as exc:
            return f"Nextcloud did not accept the new access ({exc})."
        grant = Grant(
            pending_subject(request_id, browser), user.id, "login-flow-v2", "app_password", password
        )
        grant = dataclasses.replace(grant, login=login)
        kept = runtime.settings.auth_server_grant_at_signin
        if not kept:
            await delete_at_nextcloud(runtime, credential)  # the identity is all we needed
            grant = dataclasses.replace(grant, kind=NO_CREDENTIAL, secret="")
        # The pending grant before the request is bound: the hand-off page reloads every few
        # seconds, and one that finds the request bound must find the grant too (the other order
        # answered such a reload "already signed in").
        await runtime.store.save_grant(grant)
        try:
            await runtime.authorization_requests.signed_in(request_id, user.id)
        except RequestUnusable as exc:
            await runtime.store.delete_grant(grant.subject)
            if kept:
                await delete_at_nextcloud(runtime, credential)
            return str(exc)
        await runtime.store.audit(user.id, "signed_in", "through Login Flow v2")
        return None
