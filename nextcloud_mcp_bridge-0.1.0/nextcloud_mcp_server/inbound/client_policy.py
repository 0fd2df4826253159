"""What a client may register, and where its answers may go (docs/ADR/0034): one policy for every
way a redirect URI enters - dynamic registration, AUTH_SERVER_CLIENTS, client ID metadata
documents, and /authorize (through `PolicedClient`, the form every client takes on the way to the
SDK's handlers, clients stored before this policy included).

A redirect URI is allowed when it is
- https, with a host;
- http on a loopback host (`localhost`, 127.0.0.0/8, `[::1]`): a native app's own listener;
- a private-use scheme of an app on the person's device (RFC 8252 §7.1): reverse-domain style
  (`com.example.app:/cb`) or a plain name as real MCP clients use (`cursor://...`, `vscode://...`,
  `claude://...`), unless the scheme is one the browser or the system interprets itself.
Never: a fragment (even an empty one), user info, whitespace or control characters, characters
that reorder or hide text, more than 2000 characters, and schemes such as `javascript:`, `data:`,
`vbscript:`, `file:`, `blob:` or `about:`.

The client's name is shown on the consent page: at most 200 characters, none of them controls or
characters that reorder or hide text (`nextcloud/names.py` lists them).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from pydantic import AnyUrl

from nextcloud_mcp_server.nextcloud.names import HIDDEN

__all__ = [
    "MAX_NAME",
    "MAX_REDIRECT_URI",
    "REFUSED_SCHEMES",
    "name_problem",
    "redirect_uri_problem",
    "registration_problem",
    "shown",
]

MAX_REDIRECT_URI = 2000
MAX_NAME = 200
# Schemes the browser or the operating system acts on by itself (scripts, inline content, local
# files, internal pages, other programs): an authorization answer must never go there.
REFUSED_SCHEMES = frozenset(
    {
        "javascript", "vbscript", "data", "blob", "file", "filesystem", "about", "view-source", "jar",
        "chrome", "chrome-extension", "chrome-untrusted", "devtools", "edge", "moz-extension",
        "resource", "intent", "ftp", "ws", "wss", "mailto", "tel", "sms", "urn", "smb", "ldap",
    }
)  # fmt: skip
# Schemes a web site or browser extension registered with the browser: not an app's.
WEB_HANDLER_PREFIXES = ("web+", "ext+")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,63}")
_CONTROL = re.compile(r"[\x00-\x20\x7f-\x9f]")
_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """None when `uri` may receive authorization answers, else a sentence saying why not. The
    sentence never repeats the URI: at /authorize it is shown to the person in the browser."""
    if len(uri) > MAX_REDIRECT_URI:
        return f"a redirect URI may have at most {MAX_REDIRECT_URI} characters"
    hidden = _CONTROL.search(uri) or HIDDEN.search(uri)
    if hidden is not None:
        code = f"U+{ord(hidden.group()):04X}"
        return f"a redirect URI must not contain {code} (a space, control or hidden character)"
    if "#" in uri:
        return "a redirect URI must not have a fragment"
    scheme, colon, _ = uri.partition(":")
    if not colon or not _SCHEME.fullmatch(scheme.lower()):
        return "a redirect URI must be an absolute URI"
    scheme = scheme.lower()
    if scheme in REFUSED_SCHEMES or scheme.startswith(WEB_HANDLER_PREFIXES):
        return f"a redirect URI must not use the {scheme}: scheme"
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return "a redirect URI must be a well-formed URI"
    if "@" in parts.netloc:
        return "a redirect URI must not carry user info"
    if scheme == "https":
        return None if host else "an https redirect URI needs a host"
    if scheme == "http":
        if _loopback(host):
            return None
        return "an http redirect URI must be on loopback (localhost, 127.0.0.1, [::1]); use https"
    return None  # a private-use scheme of an app on the person's device


def name_problem(name: object) -> str | None:
    """None when `name` may be shown as the client's name, else a sentence saying why not."""
    if name is None:
        return None
    if not isinstance(name, str):
        return "client_name must be text"
    if len(name) > MAX_NAME:
        return f"client_name may have at most {MAX_NAME} characters"
    found = _NAME_CONTROL.search(name) or HIDDEN.search(name)
    if found is not None:
        return (
            f"client_name must not contain U+{ord(found.group()):04X}: control characters and characters "
            "that reorder or hide text would make the consent page say something else"
        )
    return None


def registration_problem(redirect_uris: Iterable[object], client_name: object) -> str | None:
    """The first reason a client with these redirect URIs and this name cannot be registered."""
    for uri in redirect_uris:
        if not isinstance(uri, str | AnyUrl):
            return "redirect_uris must be a list of URIs"
        problem = redirect_uri_problem(str(uri))
        if problem is not None:
            return f"{problem}: {str(uri)[:200]!r}"
    return name_problem(client_name)


def shown(text: str) -> str:
    """`text` as it may appear on a page: without characters that reorder or hide text."""
    return HIDDEN.sub("", text)
