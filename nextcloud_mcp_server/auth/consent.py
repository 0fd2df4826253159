"""The browser side of consent ("Flow 2"): two routes and the pages a person sees.

`GET /oauth/authorize-nextcloud?elicitation=<id>`: the elicitation must be pending, unexpired and
never opened before. The consent provider (NEXTCLOUD_CONSENT_PROVIDER) then decides where the
browser goes: the identity provider or Nextcloud's OAuth2 app (with a single-use `state` and a
PKCE S256 verifier stored encrypted), or Nextcloud's Login Flow v2 page.

`GET /oauth/callback-nextcloud?code&state` (redirect-based providers): the state is consumed once;
the provider exchanges the code and checks the account (no mix-up); the grant is stored encrypted;
the elicitation is completed and the MCP session that asked is told. Every failure says what went
wrong and what to do, and changes nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from nextcloud_mcp_server.auth.consent_outcome import complete_consent, fail_consent
from nextcloud_mcp_server.auth.consent_providers import ConsentFailed
from nextcloud_mcp_server.auth.errors import OIDCUnavailable
from nextcloud_mcp_server.auth.oidc_client import CALLBACK_PATH
from nextcloud_mcp_server.auth.provisioning import AUTHORIZE_PATH
from nextcloud_mcp_server.nextcloud.names import HIDDEN
from nextcloud_mcp_server.storage.crypto import DecryptionFailed
from nextcloud_mcp_server.storage.records import ConsentError

__all__ = ["SECURITY_HEADERS", "SIGNIN_MARK", "consent_routes", "document", "page", "security_headers"]

logger = logging.getLogger(__name__)
# A consent state whose elicitation_id starts so belongs to a sign-in at this server's own
# authorization server (authz/signin.py): Nextcloud's OAuth2 app allows one redirect URI per client.
SIGNIN_MARK = "authz-signin:"
TRY_AGAIN = "Go back to your assistant and ask again: it will give you a fresh link."
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222;"
    "line-height:1.5} h1{font-size:1.4rem} .ok{color:#0a7d32} .bad{color:#b00020} .note{color:#444}"
    " ul{padding-left:1.2rem} .actions{display:flex;gap:1rem;margin-top:1.5rem}"
    " button,.button{font:inherit;padding:.6rem 1.4rem;border-radius:.3rem;border:2px solid #1d3f73;"
    "cursor:pointer;text-decoration:none;display:inline-block}"
    " .primary{background:#1d3f73;color:#fff} .secondary{background:#fff;color:#1d3f73}"
    " button:focus-visible,a:focus-visible{outline:3px solid #b35900;outline-offset:2px}"
    " code{overflow-wrap:anywhere}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()


def security_headers(form_action: str = "'none'", referrer: str = "no-referrer") -> dict[str, str]:
    """The headers every page of ours carries: it loads nothing, runs no script, is never framed,
    sniffed, cached or named in a Referer (links carry request ids). `form_action` is where its
    forms may submit to - and, as browsers apply it, where their answers may redirect. A page with
    a form needs `referrer` "same-origin": under "no-referrer" a browser sends `Origin: null` with
    the form, which the Origin guard (http_guard.py) rightly refuses."""
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; base-uri 'none'; "
            f"form-action {form_action}; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": referrer,
        "Cache-Control": "no-store",
    }


SECURITY_HEADERS = security_headers()


def document(
    title: str,
    body: str,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    refresh: tuple[int, str] | None = None,
) -> HTMLResponse:
    """A page of ours around `body`, which is HTML the caller escaped. `refresh` (seconds, URL)
    reloads it without script."""
    # nothing on a page of ours may reorder or hide what it says (a client's name, a message from
    # Nextcloud or the identity provider): such characters are dropped wherever they came from
    title, body = HIDDEN.sub("", title), HIDDEN.sub("", body)
    meta = ""
    if refresh is not None:
        meta = f"<meta http-equiv=refresh content='{refresh[0]}; url={html.escape(refresh[1])}'>"
    text = (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<meta name=viewport content='width=device-width'>{meta}<style>{_STYLE}</style>"
        f"<main>{body}</main></html>"
    )
    return HTMLResponse(text, status_code=status, headers=headers or SECURITY_HEADERS)


def page(title: str, message: str, *, ok: bool, status: int = 200) -> HTMLResponse:
    body = f"<h1 class={'ok' if ok else 'bad'}>{html.escape(title)}</h1><p>{html.escape(message)}</p>"
    return document(title, body, status=status)


def consent_routes(runtime: Any) -> list[Route]:
    async def authorize(request: Request) -> Response:
        elicitation_id = request.query_params.get("elicitation", "")
        try:
            elicitation = await runtime.store.open_elicitation(elicitation_id)
        except ConsentError as exc:
            return page(
                "This link cannot be used", f"{str(exc).capitalize()}. {TRY_AGAIN}", ok=False, status=400
            )
        try:
            target = await runtime.consent_provider.begin(elicitation)
        except OIDCUnavailable as exc:
            logger.warning("consent cannot start: %s", exc)
            return page(
                "The sign-in service is unavailable",
                f"Try again in a minute. {TRY_AGAIN}",
                ok=False,
                status=502,
            )
        except ConsentFailed as exc:
            await fail_consent(runtime, elicitation.id, elicitation.subject, exc.reason)
            return page(exc.title, f"{exc.message} {TRY_AGAIN}", ok=False, status=exc.status)
        return RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)

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
        if consent.elicitation_id.startswith(SIGNIN_MARK):  # a sign-in of this server's own
            from nextcloud_mcp_server.authz.signin import finish_signin

            return await finish_signin(runtime, request, consent)
        if "error" in params:
            reason = (params.get("error_description") or params["error"])[:300]  # from outside
            await fail_consent(
                runtime, consent.elicitation_id, consent.subject, f"the sign-in service said: {reason}"
            )
            return page(
                "Access was not granted",
                f"The sign-in service said: {reason}. {TRY_AGAIN}",
                ok=False,
                status=400,
            )
        elicitation = await store.get_elicitation(consent.elicitation_id)
        expected_user = elicitation.user_id if elicitation else ""
        try:
            grant = await runtime.consent_provider.finish(consent, expected_user, params)
        except ConsentFailed as exc:
            await fail_consent(runtime, consent.elicitation_id, consent.subject, exc.reason)
            return page(exc.title, f"{exc.message} {TRY_AGAIN}", ok=False, status=exc.status)
        await complete_consent(runtime, consent.elicitation_id, grant)
        return page("Connected", "Your Nextcloud is connected. You can return to your app.", ok=True)

    return [
        Route(AUTHORIZE_PATH, authorize, methods=["GET"]),
        Route(CALLBACK_PATH, callback, methods=["GET"]),
    ]
