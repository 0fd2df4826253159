"""The browser side of consent ("Flow 2"): two routes and the pages a person sees.

`GET /oauth/authorize-nextcloud?elicitation=<id>`: the elicitation must be pending, unexpired and
never opened before. A single-use `state`, a PKCE S256 verifier (stored encrypted) and a nonce are
stored, and the browser goes to the identity provider.

`GET /oauth/callback-nextcloud?code&state`: the state is consumed once; the code is exchanged;
the ID token's subject must be the subject the elicitation was created for (no account mix-up);
the refresh token is stored encrypted; the elicitation is completed and the MCP session that asked
is told. Every failure says what went wrong and what to do, and changes nothing else.
"""

from __future__ import annotations

import html
import logging
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from nextcloud_mcp_server.auth.oidc import OIDCUnavailable
from nextcloud_mcp_server.auth.oidc_client import CALLBACK_PATH, InvalidGrant, ProviderError, pkce_pair
from nextcloud_mcp_server.auth.provisioning import AUTHORIZE_PATH
from nextcloud_mcp_server.storage.crypto import DecryptionFailed
from nextcloud_mcp_server.storage.store import ConsentError, Grant

__all__ = ["consent_routes", "page"]

logger = logging.getLogger(__name__)
STATE_TTL = 600.0
TRY_AGAIN = "Go back to your assistant and ask again: it will give you a fresh link."
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222}"
    "h1{font-size:1.4rem} .ok{color:#0a7d32} .bad{color:#b00020}"
)


def page(title: str, message: str, *, ok: bool, status: int = 200) -> HTMLResponse:
    body = (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<meta name=viewport content='width=device-width'><style>{_STYLE}</style>"
        f"<h1 class={'ok' if ok else 'bad'}>{html.escape(title)}</h1><p>{html.escape(message)}</p></html>"
    )
    headers = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}
    return HTMLResponse(body, status_code=status, headers=headers)


def consent_routes(runtime: Any) -> list[Route]:
    async def authorize(request: Request) -> Response:
        elicitation_id = request.query_params.get("elicitation", "")
        store = runtime.store
        try:
            elicitation = await store.open_elicitation(elicitation_id)
        except ConsentError as exc:
            return page(
                "This link cannot be used", f"{str(exc).capitalize()}. {TRY_AGAIN}", ok=False, status=400
            )
        verifier, challenge = pkce_pair()
        nonce = secrets.token_urlsafe(16)
        state = await store.create_state(elicitation.id, elicitation.subject, verifier, nonce, STATE_TTL)
        try:
            target = await runtime.oidc_client.authorization_url(
                state=state, challenge=challenge, nonce=nonce, login_hint=elicitation.subject
            )
        except OIDCUnavailable as exc:
            logger.warning("consent cannot start: %s", exc)
            return page(
                "The sign-in service is unavailable",
                f"Try again in a minute. {TRY_AGAIN}",
                ok=False,
                status=502,
            )
        return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})

    async def callback(request: Request) -> Response:
        params = request.query_params
        store = runtime.store
        try:
            consent = await store.consume_state(params.get("state", ""))
        except DecryptionFailed as exc:
            logger.error("consent state unreadable: %s", exc)
            return page(
                "This sign-in cannot be completed",
                f"Stored sign-in data could not be read. {TRY_AGAIN}",
                ok=False,
                status=500,
            )
        if consent is None:
            return page(
                "This sign-in cannot be completed",
                f"The link was already used, has expired, or did not come from this server. {TRY_AGAIN}",
                ok=False,
                status=400,
            )
        if "error" in params:
            reason = params.get("error_description") or params["error"]
            await _fail(
                runtime, consent.elicitation_id, consent.subject, f"the identity provider said: {reason}"
            )
            return page(
                "Access was not granted",
                f"The sign-in service said: {reason}. {TRY_AGAIN}",
                ok=False,
                status=400,
            )
        try:
            tokens = await runtime.oidc_client.exchange_code(params.get("code", ""), consent.verifier)
            claims = await runtime.oidc_client.id_token_claims(tokens.id_token or "", consent.nonce)
        except (ProviderError, InvalidGrant, OIDCUnavailable) as exc:
            await _fail(runtime, consent.elicitation_id, consent.subject, f"sign-in failed: {exc}")
            return page(
                "Sign-in failed",
                f"The sign-in could not be completed ({exc}). {TRY_AGAIN}",
                ok=False,
                status=400,
            )
        if claims.get("sub") != consent.subject:
            await _fail(runtime, consent.elicitation_id, consent.subject, "signed in as a different account")
            return page(
                "Signed in as someone else",
                "You signed in with a different account than the one your assistant uses, so nothing "
                f"was connected. Sign out of the identity provider, then: {TRY_AGAIN}",
                ok=False,
                status=403,
            )
        if not tokens.refresh_token:
            await _fail(runtime, consent.elicitation_id, consent.subject, "no refresh token was issued")
            return page(
                "Offline access was not granted",
                "The sign-in service did not allow offline access (no refresh token). Ask your "
                "administrator to allow the offline_access scope for this server's client.",
                ok=False,
                status=400,
            )
        user_id = str(claims.get(runtime.settings.oidc_user_claim) or consent.subject)
        grant = Grant(consent.subject, user_id, "oidc", "refresh_token", tokens.refresh_token, tokens.scope)
        await complete_consent(runtime, consent.elicitation_id, grant)
        return page("Connected", "Your Nextcloud is connected. You can return to your app.", ok=True)

    return [
        Route(AUTHORIZE_PATH, authorize, methods=["GET"]),
        Route(CALLBACK_PATH, callback, methods=["GET"]),
    ]


async def complete_consent(runtime: Any, elicitation_id: str, grant: Grant) -> None:
    """Store the grant, close the elicitation and tell the MCP session that asked."""
    await runtime.store.save_grant(grant)
    runtime.credentials.forget(grant.subject)
    await runtime.store.finish_elicitation(elicitation_id, "complete")
    await runtime.store.audit(grant.subject, "granted", f"provider {grant.provider}; scopes {grant.scopes}")
    notified = await runtime.elicitation_sessions.complete(elicitation_id)
    logger.info("consent for %s complete (session notified: %s)", grant.subject, notified)


async def _fail(runtime: Any, elicitation_id: str, subject: str, reason: str) -> None:
    await runtime.store.finish_elicitation(elicitation_id, "failed", reason)
    await runtime.store.audit(subject, "failed", reason)
    runtime.elicitation_sessions.forget(elicitation_id)
