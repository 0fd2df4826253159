"""Nextcloud's WebDAV session, kept per credential and sent back (docs/ADR/0106).

A WebDAV request that comes with only an app password makes Nextcloud log the user in again:
the password checked, login events, a new PHP session written. Sent back with the session
cookies of an earlier answer to the same credential, the request is served by that session
instead, for about a third less of Nextcloud's CPU (measured on 29 and 34: 30 -> 18 ms and
46 -> 29 ms of php-fpm CPU per PROPFIND). Nextcloud still checks the app password behind the
session on every request: a revoked one is refused at once (401), session or not.

The rules that keep this safe:
- Only for HTTP Basic credentials (app passwords), and only for requests below
  `/remote.php/`: Nextcloud keeps a WebDAV session apart from the others (a Notes API answer to
  the same cookie turns it into one WebDAV then refuses with 401), and it closes the session as
  soon as the request is authenticated, so requests sharing one run side by side.
- Kept per credential by a keyed digest of its Authorization header (never the secret itself),
  in memory only, at most `capacity` credentials (the least recently used go first) and a few
  small cookies each. Cookies are never logged.
- A 401 to a request that carried a session forgets it; the request is sent again once without.
- The session of an OCS `cloud/user` answer is kept too (never sent to OCS): WebDAV takes it as
  its own, so a new process's first WebDAV request, after that discovery, is not a new login
  (docs/ADR/0112).
"""

from __future__ import annotations

import email.utils
import hashlib
import hmac
import os
import time
from collections import OrderedDict
from collections.abc import Iterable
from http.cookies import CookieError, Morsel, SimpleCookie

from nextcloud_mcp_server.nextcloud.auth import BasicCredential, Credential

__all__ = ["DavSessions"]

MAX_COOKIES = 8
MAX_COOKIE_BYTES = 512


class DavSessions:
    """The WebDAV session cookies Nextcloud gave each credential, to send back."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._secret = os.urandom(32)
        self._cookies: OrderedDict[bytes, dict[str, str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._cookies)

    def _key(self, authorization: str) -> bytes:
        return hmac.new(self._secret, authorization.encode(), hashlib.sha256).digest()

    @staticmethod
    def keys_for(
        credential: Credential | None,
        authorization: str,
        method: str,
        webdav: bool,
        replayable: bool,
        *,
        opens_session: bool,
    ) -> tuple[str | None, str | None]:
        """Under which key (the request's `authorization`, the header `credential` gave) a request
        sends a kept session, and under which its answer's cookies are kept (None: not). A
        replayable WebDAV request with an app password does both; not a POST, which Nextcloud's
        WebDAV checks for a CSRF token when a session comes with it. An answer that
        `opens_session` (OCS `cloud/user`) is only learned from."""
        if not isinstance(credential, BasicCredential):
            return None, None
        key = authorization
        if webdav and replayable and method != "POST":
            return key, key
        return None, key if opens_session else None

    def cookie_header(self, authorization: str) -> str | None:
        """The `Cookie` header for the next request with this credential, if a session is kept."""
        key = self._key(authorization)
        cookies = self._cookies.get(key)
        if not cookies:
            return None
        self._cookies.move_to_end(key)
        return "; ".join(f"{name}={value}" for name, value in cookies.items())

    def learn(self, authorization: str, set_cookies: Iterable[str]) -> None:
        """Keep what an authenticated answer set (a cookie set again replaces the old value; one
        set to expire is dropped)."""
        key = self._key(authorization)
        cookies = dict(self._cookies.get(key, {}))
        for header in set_cookies:
            parsed: SimpleCookie = SimpleCookie()
            try:
                parsed.load(header)
            except CookieError:
                continue
            for name, morsel in parsed.items():
                if _expired(morsel):
                    cookies.pop(name, None)
                elif _keepable(name, morsel.value) and (name in cookies or len(cookies) < MAX_COOKIES):
                    cookies[name] = morsel.value
        if cookies:
            self._cookies[key] = cookies
            self._cookies.move_to_end(key)
            while len(self._cookies) > self.capacity:
                self._cookies.popitem(last=False)
        else:
            self._cookies.pop(key, None)

    def forget(self, authorization: str) -> None:
        self._cookies.pop(self._key(authorization), None)


def _expired(morsel: Morsel[str]) -> bool:
    """Set to expire: no value, Nextcloud's "deleted", a max-age of 0 or less, a past date."""
    max_age = morsel["max-age"].strip()
    if morsel.value in ("", "deleted") or max_age == "0" or max_age.startswith("-"):
        return True
    if morsel["expires"]:
        try:
            return email.utils.parsedate_to_datetime(morsel["expires"]).timestamp() <= time.time()
        except (TypeError, ValueError, OverflowError, IndexError):
            return False
    return False


def _keepable(name: str, value: str) -> bool:
    """Short, printable ASCII without the characters that would split or end a Cookie header."""
    text = name + value
    return len(text) <= MAX_COOKIE_BYTES and all(33 <= ord(c) <= 126 and c not in ';,"\\' for c in text)
