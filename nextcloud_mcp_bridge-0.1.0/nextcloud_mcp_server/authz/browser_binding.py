"""What binds a sign-in at our authorization server to the browser that started it (ADR 0033): a
random cookie (`__Host-` on https), a CSRF token derived from it, and where a signed-in request's
credential waits, found only with the request id and that cookie together. Shared by the
OAuth2-app sign-in (`signin.py`) and the Login Flow v2 one (`signin_flow.py`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from nextcloud_mcp_server.authz.pages import TRY_AGAIN

__all__ = [
    "BROWSER_COOKIE",
    "COOKIE_PATH",
    "HOST_COOKIE",
    "MAX_FORM_BYTES",
    "NO_CREDENTIAL",
    "OTHER_BROWSER",
    "PENDING_MARK",
    "bind",
    "browser_of",
    "cookie_name",
    "csrf_token",
    "digest_of",
    "is_secure",
    "pending_subject",
]

BROWSER_COOKIE = "nc_mcp_browser"
COOKIE_PATH = "/oauth"  # sign-in, Nextcloud's callback and the consent page; nothing else
# On https the cookie is __Host- prefixed: browsers take it only from this origin itself (Secure,
# Path=/, no Domain), so another host under the same domain cannot plant its own value in a
# victim's browser and so have Nextcloud's answer bound to the planter's browser (ADR 0033).
HOST_COOKIE = f"__Host-{BROWSER_COOKIE}"
PENDING_MARK = "authz-pending:"
MAX_FORM_BYTES = 4096
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
NO_CREDENTIAL = "none"  # a pending grant's kind when the credential was not kept


def digest_of(value: str) -> str:
    """The browser cookie as stored: its SHA-256, never the value."""
    return hashlib.sha256(value.encode()).hexdigest()


def pending_subject(request_id: str, browser: str) -> str:
    """Where a signed-in request's Nextcloud credential waits for the answer: found only with the
    request id and the browser's cookie together."""
    return f"{PENDING_MARK}{request_id}:{digest_of(browser)}"


def csrf_token(request_id: str, browser: str) -> str:
    """The consent form's token: only a page that saw the (HttpOnly) cookie can know it."""
    mac = hmac.new(browser.encode(), f"consent\0{request_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def cookie_name(secure: bool) -> str:
    """The binding cookie's name: on https __Host- prefixed, which only this origin can set."""
    return HOST_COOKIE if secure else BROWSER_COOKIE


def is_secure(runtime: Any) -> bool:
    """Whether this server is reached over https (its public origin)."""
    return bool(runtime.settings.public_origin.startswith("https://"))


def browser_of(request: Request, secure: bool) -> str | None:
    """The binding cookie's value, if the browser sent a well-formed one."""
    value = request.cookies.get(cookie_name(secure), "")
    return value if _TOKEN.fullmatch(value) else None


def bind(response: Response, browser: str, secure: bool, max_age: float) -> Response:
    response.set_cookie(
        cookie_name(secure),
        browser,
        max_age=max(1, int(max_age)),
        path="/" if secure else COOKIE_PATH,  # __Host- requires Path=/
        secure=secure,
        httponly=True,
        samesite="lax",
    )
    return response


OTHER_BROWSER = (
    "Open this in the browser you signed in with",
    f"This step belongs to a sign-in started in another browser (or its cookie was removed), so "
    f"nothing was changed. {TRY_AGAIN}",
)
