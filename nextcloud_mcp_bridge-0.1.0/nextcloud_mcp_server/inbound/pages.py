"""Our own pages: a small HTML kit around a body the caller escaped, and the security headers every
page carries (no script, nothing loaded, never framed, cached or sniffed). auth (consent) and authz
(sign-in, the consent of our authorization server) render their pages with it."""

from __future__ import annotations

import base64
import hashlib
import html

from starlette.responses import HTMLResponse

from nextcloud_mcp_server.nextcloud.names import HIDDEN

__all__ = ["SECURITY_HEADERS", "TRY_AGAIN", "document", "page", "security_headers"]

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
    the form, which the Origin guard (web/http_guard.py) rightly refuses."""
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
