"""The pages a person sees while an MCP client is authorized: the consent page, the Login Flow
hand-off page and the error pages. No script anywhere; every text from outside (client name,
redirect URI, account) is escaped, isolated (`<bdi>`) and stripped of characters that reorder or
hide text; the headers are the shared strict ones (`auth/consent.py`).
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

from starlette.responses import HTMLResponse

from nextcloud_mcp_server import toolsets
from nextcloud_mcp_server.auth.scopes import normalize
from nextcloud_mcp_server.inbound.client_policy import shown
from nextcloud_mcp_server.inbound.pages import document, page, security_headers

__all__ = [
    "SCOPE_WORDS",
    "consent_page",
    "error_page",
    "form_action",
    "handoff_page",
    "redirect_host",
    "scope_words",
]

TRY_AGAIN = "Go back to the app you were connecting and start again: it opens a fresh sign-in."
# what each scope lets a client do, as each toolset declares it (toolsets/<name>/__init__.py)
SCOPE_WORDS = {scope.name: scope.words for scope in toolsets.scopes()}


def scope_words(scopes: tuple[str, ...]) -> list[str]:
    """What each scope lets the client do, in plain words (unknown names as they are)."""
    canonical = sorted(
        normalize(scopes), key=lambda s: (list(SCOPE_WORDS).index(s) if s in SCOPE_WORDS else 99, s)
    )
    return [SCOPE_WORDS.get(scope, scope) for scope in canonical]


def _origin_host(redirect_uri: str) -> str | None:
    """`host[:port]` of an http(s) URI (IPv6 in brackets, never user info), else None."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


def redirect_host(redirect_uri: str) -> str:
    """Where the client's answer goes, as a person can check it: the host, or for an app's own
    scheme (`com.example.app:/cb`) the scheme."""
    host = _origin_host(redirect_uri)
    return host if host is not None else f"{urlsplit(redirect_uri).scheme}:"


def form_action(redirect_uri: str) -> str:
    """The consent form's `form-action`: this server, and the client's redirect origin - Chromium
    applies form-action to the redirect that answers the form, and that redirect goes there."""
    host = _origin_host(redirect_uri)
    scheme = urlsplit(redirect_uri).scheme
    return f"'self' {scheme}://{host}" if host is not None else f"'self' {scheme}:"


def _isolated(text: str) -> str:
    """Text from outside, escaped, without characters that reorder or hide text, and isolated
    (`<bdi>`): right-to-left text in a client's name cannot reorder the sentence around it."""
    return f"<bdi>{html.escape(shown(text))}</bdi>"


def error_page(title: str, message: str, *, status: int = 400) -> HTMLResponse:
    return page(title, message, ok=False, status=status)


def consent_page(
    *,
    action: str,
    request_id: str,
    csrf: str,
    client_name: str,
    client_id: str,
    redirect_uri: str,
    scopes: tuple[str, ...],
    account: str,
) -> HTMLResponse:
    """Approve or decline: names the client, where it sends the answer, what it may do, and as whom."""
    name = _isolated(client_name or client_id)
    items = "".join(f"<li>{_isolated(words)}</li>" for words in scope_words(scopes))
    body = (
        f"<h1>Allow {name} to use your Nextcloud?</h1>"
        f"<p>You are signed in to Nextcloud as <strong>{_isolated(account)}</strong>.</p>"
        f"<p><strong>{name}</strong> asks to act for you. It may:</p><ul>{items}</ul>"
        f"<p class=note>After your answer, your browser goes to "
        f"<strong>{_isolated(redirect_host(redirect_uri))}</strong>. The app chose its own name; "
        f"its client ID is <code>{_isolated(client_id)}</code>. Approve only if you started this "
        f"from that app.</p>"
        f"<form method=post action='{html.escape(action)}'>"
        f"<input type=hidden name=request value='{html.escape(request_id)}'>"
        f"<input type=hidden name=csrf value='{html.escape(csrf)}'>"
        "<div class=actions>"
        "<button class=primary type=submit name=decision value=approve>Approve</button>"
        "<button class=secondary type=submit name=decision value=decline>Decline</button>"
        "</div></form>"
    )
    headers = security_headers(form_action(redirect_uri), referrer="same-origin")
    return document(f"Allow {client_name or client_id}?", body, headers=headers)


def handoff_page(*, login_url: str | None, refresh_url: str, every: int = 3) -> HTMLResponse:
    """Login Flow v2 (AUTH_SERVER_LOGIN_FLOW_SIGNIN): a link that opens Nextcloud's sign-in in a new
    tab, with a warning never to forward it - the link is not bound to this browser (ADR 0033);
    this page reloads itself (no script) until the sign-in is done, then goes on to consent."""
    link = ""
    if login_url:
        link = (
            f"<p><a class='button primary' href='{html.escape(login_url)}' target=_blank "
            f"rel='noopener noreferrer'>Sign in at Nextcloud (opens a new tab)</a></p>"
        )
    body = (
        "<h1>Sign in with your Nextcloud account</h1>"
        "<p>Sign in at Nextcloud and grant access in the tab that opens. Keep this page open: it "
        "checks every few seconds and continues by itself when you are done.</p>"
        f"{link}<p class=note><strong>Never send this link to anyone</strong>, and never open one "
        "that someone sent you: whoever signs in through it hands their Nextcloud account to the "
        "browser showing this page.</p>"
        f"<p class=note>Nothing happens? <a href='{html.escape(refresh_url)}'>Check now</a>.</p>"
    )
    return document("Sign in with Nextcloud", body, refresh=(every, refresh_url))
