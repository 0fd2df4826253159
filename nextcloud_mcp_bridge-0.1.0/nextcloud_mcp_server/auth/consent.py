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

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from nextcloud_mcp_server.auth.consent_outcome import complete_consent, fail_consent
from nextcloud_mcp_server.auth.consent_providers import ConsentFailed
from nextcloud_mcp_server.auth.errors import OIDCUnavailable
from nextcloud_mcp_server.auth.oidc_client import CALLBACK_PATH
from nextcloud_mcp_server.auth.provisioning import AUTHORIZE_PATH
from nextcloud_mcp_server.inbound.pages import SECURITY_HEADERS, TRY_AGAIN, page
from nextcloud_mcp_server.storage.crypto import DecryptionFailed
from nextcloud_mcp_server.storage.records import ConsentError, ConsentState

__all__ = ["SIGNIN_MARK", "consent_routes"]

logger = logging.getLogger(__name__)
# A consent state whose elicitation_id starts so belongs to a sign-in at this server's own
# authorization server (authz/signin.py): Nextcloud's OAuth2 app allows one redirect URI per client.
SIGNIN_MARK = "authz-signin:"
# What finishes such a sign-in (authz/signin.py's `finish_signin`, handed over by the app).
SigninFinisher = Callable[[Any, Request, ConsentState], Awaitable[Response]]


def consent_routes(runtime: Any, finish_signin: SigninFinisher | None = None) -> list[Route]:
    """The consent routes; `finish_signin` takes over a callback that belongs to a sign-in at this
    server's own authorization server (auth never imports authz: the app composes them)."""

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
            if finish_signin is None:
                return page("This sign-in cannot be completed", TRY_AGAIN, ok=False, status=400)
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
