"""The person's side of an authorization (AUTH_SERVER_ENABLED; docs/ADR/0026): sign in at
Nextcloud, then approve or decline on our consent page.

- `GET SIGNIN_PATH?request=<id>`: the request must be usable. The browser gets a random binding
  value in a cookie (HttpOnly, SameSite=Lax, Path=/oauth; on https `__Host-` prefixed, Secure,
  Path=/) and goes to Nextcloud's OAuth2 app with a single-use state (its row names the request
  and the cookie's hash) and PKCE S256. Nextcloud answers at the same callback progressive
  consent uses (one redirect URI per Nextcloud client); `consent.py` hands states of ours to
  `finish_signin`, which accepts the answer only in the browser whose cookie the state names: a
  Nextcloud link forwarded to someone else signs nobody in (docs/ADR/0033). Only with
  AUTH_SERVER_LOGIN_FLOW_SIGNIN=true (an accepted risk: a Login Flow link is bound to no
  browser) does the browser get the Login Flow v2 hand-off page instead (`signin_flow.py`).
  Opened again in the browser that signed in, it goes on to the consent page.
- `finish_signin`: the same browser, a usable request; the code is exchanged (which names the
  Nextcloud user), the user is bound to the request once, and the Nextcloud credential is kept
  encrypted as a pending grant whose key holds the request and the cookie's hash. With
  AUTH_SERVER_GRANT_AT_SIGNIN=false it is deleted at Nextcloud at once. In another browser
  nothing is bound; the code is redeemed only to delete its access at Nextcloud (audited).
- `GET CONSENT_PATH?request=<id>`: only for the bound browser. `POST` (CSRF token derived from the
  request and the cookie, compared in constant time): the pending grant is taken once; approve
  stores it as the user's offline grant and answers 303 to `approve()`'s URL; decline deletes it
  at Nextcloud and answers 303 to `decline()`'s URL.

Every failure is a page that says what happened and what to do, and changes nothing.
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from nextcloud_mcp_server.auth.consent import SIGNIN_MARK
from nextcloud_mcp_server.auth.consent_outcome import store_grant
from nextcloud_mcp_server.auth.consent_providers import STATE_TTL, ConsentFailed, NextcloudOAuth2Consent
from nextcloud_mcp_server.auth.oidc_client import pkce_pair
from nextcloud_mcp_server.auth.scopes import normalize
from nextcloud_mcp_server.authz.browser_binding import (
    BROWSER_COOKIE,
    HOST_COOKIE,
    MAX_FORM_BYTES,
    NO_CREDENTIAL,
    OTHER_BROWSER,
    PENDING_MARK,
    bind,
    browser_of,
    cookie_name,
    csrf_token,
    digest_of,
    is_secure,
    pending_subject,
)
from nextcloud_mcp_server.authz.pages import TRY_AGAIN, consent_page, error_page
from nextcloud_mcp_server.authz.requests import CONSENT_PATH, SIGNIN_PATH, RequestUnusable
from nextcloud_mcp_server.authz.signin_flow import FlowSignins
from nextcloud_mcp_server.inbound.pages import SECURITY_HEADERS
from nextcloud_mcp_server.storage.crypto import DecryptionFailed
from nextcloud_mcp_server.storage.records import ConsentState, Grant

__all__ = [
    "BROWSER_COOKIE",
    "HOST_COOKIE",
    "NO_CREDENTIAL",
    "OTHER_BROWSER",
    "SIGNIN_MARK",
    "bind",
    "cookie_name",
    "csrf_token",
    "finish_signin",
    "pending_subject",
    "signin_routes",
    "sweep_pending",
]

logger = logging.getLogger(__name__)


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


_UNUSABLE = (
    "This sign-in link cannot be used",
    f"It has expired, was already answered, or is unknown here. {TRY_AGAIN}",
)
_NOT_SET_UP = (
    "Sign-in is not set up",
    "This server signs people in through Nextcloud's OAuth2 app, which is not configured "
    "(NEXTCLOUD_OAUTH2_CLIENT_ID). Tell the administrator.",
)
_ANSWER_IN_OTHER_BROWSER = (
    OTHER_BROWSER[0],
    "This sign-in was started in another browser (or its cookie was removed), so nothing was "
    "connected. If someone sent you the link, they got no access to your account. If you started "
    "it yourself, go back to the app you were connecting and start again, in this browser.",
)


async def _revoke(runtime: Any, grant: Grant) -> bool:
    if grant.kind == NO_CREDENTIAL:
        return True
    try:
        return bool(await runtime.revoke_grant(grant))
    except Exception as exc:  # best effort: the grant is never used either way
        logger.warning("deleting a sign-in credential at Nextcloud failed: %s", exc)
        return False


async def finish_signin(runtime: Any, request: Request, state: ConsentState) -> Response:
    """Nextcloud's answer to a sign-in of ours (the callback consumed `state` already)."""
    request_id = state.elicitation_id[len(SIGNIN_MARK) :]
    browser = browser_of(request, is_secure(runtime))
    if browser is None or not hmac.compare_digest(digest_of(browser), state.subject):
        await _discard(runtime, state, request)  # e.g. a forwarded link
        return error_page(*_ANSWER_IN_OTHER_BROWSER, status=403)
    params = request.query_params
    if "error" in params:
        reason = (params.get("error_description") or params["error"])[:300]  # from outside
        return error_page("You were not signed in", f"Nextcloud said: {reason}. {TRY_AGAIN}")
    requests = runtime.authorization_requests
    pending = await requests.get(request_id)
    if pending is None:
        return error_page(*_UNUSABLE)
    provider = runtime.consent_providers.get("nextcloud-oauth2")
    if provider is None:  # the configuration changed since this sign-in started
        return error_page(*_NOT_SET_UP, status=503)
    try:
        grant = await provider.finish(state, "", params)
    except ConsentFailed as exc:
        return error_page(exc.title, f"{exc.message} {TRY_AGAIN}", status=exc.status)
    kept = runtime.settings.auth_server_grant_at_signin
    made = grant
    if not kept:
        await _revoke(runtime, grant)  # the identity is all we needed
        grant = dataclasses.replace(grant, kind=NO_CREDENTIAL, secret="")
    subject = pending_subject(request_id, browser)
    await runtime.store.save_grant(dataclasses.replace(grant, subject=subject))  # before the binding:
    try:  # a page that finds the request bound finds its pending grant (as in signin_flow.py)
        await requests.signed_in(request_id, grant.user_id)
    except RequestUnusable as exc:
        await runtime.store.delete_grant(subject)
        if kept:
            await _revoke(runtime, made)
        return error_page("This sign-in cannot be completed", f"{exc}")
    await runtime.store.audit(grant.user_id, "signed_in", f"for client {pending.client_id[:200]}")
    return _redirect(_consent_location(request_id))


async def _discard(runtime: Any, state: ConsentState, request: Request) -> None:
    """Nextcloud's answer reached another browser: binds nobody, and the access it made for the
    person who granted it is deleted at Nextcloud (ADR 0033); the audit trail keeps the attempt."""
    provider = runtime.consent_providers.get("nextcloud-oauth2")
    if not isinstance(provider, NextcloudOAuth2Consent) or "error" in request.query_params:
        return
    discarded = await provider.discard(state, request.query_params)
    if discarded is not None:
        user_id, deleted = discarded
        detail = f"sign-in answered in another browser, nothing bound; deleted at Nextcloud: {deleted}"
        await runtime.store.audit(user_id, "refused", detail)


def _consent_location(request_id: str) -> str:
    return f"{CONSENT_PATH}?{urlencode({'request': request_id})}"


def signin_routes(runtime: Any) -> list[Route]:
    settings = runtime.settings
    secure = is_secure(runtime)

    flows = FlowSignins(runtime)

    async def signin(request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        pending = await runtime.authorization_requests.get(request_id)
        if pending is None:
            return error_page(*_UNUSABLE)
        known = browser_of(request, secure)
        if pending.user_id is not None:
            if known is not None and await _pending_grant(pending.id, known) is not None:
                return _redirect(_consent_location(pending.id))  # e.g. the hand-off page reloading
            return error_page(
                "You have already signed in for this request",
                f"Go back to the page that asks for your approval, or start again. {TRY_AGAIN}",
            )
        browser = known or secrets.token_urlsafe(32)
        if settings.signin_provider == "login-flow-v2":
            return await flows.page(request, pending, browser, digest_of(browser))
        provider = runtime.consent_providers.get("nextcloud-oauth2")
        if provider is None:
            return error_page(*_NOT_SET_UP, status=503)
        lifetime = min(STATE_TTL, pending.expires_at - time.time())
        verifier, challenge = pkce_pair()
        state = await runtime.store.create_state(
            SIGNIN_MARK + pending.id, digest_of(browser), verifier, "", lifetime
        )
        target = provider.client.authorization_url(
            redirect_uri=provider.callback_url, state=state, challenge=challenge
        )
        return bind(_redirect(target), browser, secure, pending.expires_at - time.time())

    async def show(request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        found = await _signed_in_request(request_id, browser_of(request, secure))
        if isinstance(found, Response):
            return found
        pending, browser, grant = found
        return consent_page(
            action=CONSENT_PATH,
            request_id=pending.id,
            csrf=csrf_token(pending.id, browser),
            client_name=pending.client_name,
            client_id=pending.client_id,
            redirect_uri=pending.redirect_uri,
            scopes=tuple(sorted(normalize(pending.scopes))),
            account=grant.user_id,
        )

    async def _pending_grant(request_id: str, browser: str) -> Grant | None:
        try:
            grant: Grant | None = await runtime.store.get_grant(pending_subject(request_id, browser))
        except DecryptionFailed:
            return None
        return grant

    async def _signed_in_request(request_id: str, browser: str | None) -> Any:
        pending = await runtime.authorization_requests.get(request_id)
        if pending is None:
            return error_page(*_UNUSABLE)
        if pending.user_id is None:
            return error_page("Sign in first", f"This request has no signed-in account yet. {TRY_AGAIN}")
        if browser is None:
            return error_page(*OTHER_BROWSER, status=403)
        grant = await _pending_grant(pending.id, browser)
        if grant is None or grant.user_id != pending.user_id:  # kept before the binding: the same account
            return error_page(*OTHER_BROWSER, status=403)
        return pending, browser, grant

    async def answer(request: Request) -> Response:
        form = await _small_form(request)
        if form is None:
            return error_page(
                "This answer could not be read", f"Nothing was changed. {TRY_AGAIN}", status=413
            )
        request_id, decision = form.get("request", ""), form.get("decision", "")
        browser = browser_of(request, secure)
        if browser is None or not hmac.compare_digest(form.get("csrf", ""), csrf_token(request_id, browser)):
            return error_page(
                "This answer was not accepted",
                "It did not come from the consent page this browser was shown, so nothing was changed. "
                "Open the consent page again from your app.",
                status=403,
            )
        if decision not in ("approve", "decline"):
            return error_page("Choose Approve or Decline", "Nothing was changed.", status=400)
        found = await _signed_in_request(request_id, browser)
        if isinstance(found, Response):
            return found
        pending, browser, grant = found
        if not await runtime.store.delete_grant(pending_subject(request_id, browser)):
            return error_page(*_UNUSABLE)  # another answer took it first
        if decision == "decline":
            await _revoke(runtime, grant)
            await runtime.store.audit(grant.user_id, "declined", f"client {pending.client_id[:200]}")
            try:
                return _redirect(await runtime.authorization_requests.decline(request_id))
            except RequestUnusable as exc:
                return error_page("This request has ended", str(exc))
        try:
            target = await runtime.authorization_requests.approve(request_id)
        except RequestUnusable as exc:
            await _revoke(runtime, grant)
            return error_page("This sign-in cannot be completed", str(exc))
        if grant.kind != NO_CREDENTIAL:
            await store_grant(runtime, dataclasses.replace(grant, subject=grant.user_id))
        await runtime.store.audit(grant.user_id, "approved", f"client {pending.client_id[:200]}")
        return _redirect(target)

    return [
        Route(SIGNIN_PATH, signin, methods=["GET"]),
        Route(CONSENT_PATH, show, methods=["GET"]),
        Route(CONSENT_PATH, answer, methods=["POST"]),
    ]


async def _small_form(request: Request) -> dict[str, str] | None:
    """The urlencoded form, or None when it is larger than a consent answer can be."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    try:
        parsed = parse_qs(body.decode("ascii"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    form = {key: values[0] for key, values in parsed.items() if len(values) == 1}
    # the page's fields are ASCII tokens: `%C3%A9` made the CSRF comparison raise TypeError, a
    # NUL made PostgreSQL refuse the request's lookup
    if not all(value.isascii() and value.isprintable() for value in form.values()):
        return None
    return form


async def sweep_pending(runtime: Any) -> int:
    """Delete, at Nextcloud and here, the credentials of sign-ins whose request can no longer be
    answered (expired, or answered in a way that left one behind); how many (housekeeping)."""
    swept = 0
    for subject in await runtime.store.grant_subjects(PENDING_MARK):
        request_id = subject[len(PENDING_MARK) :].rpartition(":")[0]
        if await runtime.authorization_requests.get(request_id) is not None:
            continue
        try:
            grant = await runtime.store.get_grant(subject)
        except DecryptionFailed:
            grant = None
        if not await runtime.store.delete_grant(subject):
            continue  # answered meanwhile
        if grant is not None:
            revoked = await _revoke(runtime, grant)
            await runtime.store.audit(
                grant.user_id, "expired", f"unanswered sign-in; at Nextcloud: {revoked}"
            )
        swept += 1
    return swept
