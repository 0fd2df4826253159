"""Nextcloud's login and grant pages driven over HTTP, as a browser would drive them.

Nextcloud 34's pages do not render in the kit (one front-end bundle is missing), so where the
browser tests use Chromium against 29, the same flows on 34 go through this: GET each page, read
what its script would read (the `requesttoken` of the page head, the `initial-state-*` values),
and POST what its form would post, with the `Origin` header 34 wants on `POST /login`.

    with NextcloudPages(nextcloud.url) as pages:
        page = pages.follow(consent_url, "alice", password)
        pages.browser.post(...)    # the same browser (cookies) for what comes after

`follow` goes from any link that leads into Nextcloud's login (the OAuth2 app's authorize URL,
a Login Flow v2 link, our own consent link) through the account picker, the login form and the
grant page, and returns the last answer: our callback's page, or Nextcloud's "Account connected".
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = ["NextcloudPages"]

_STATE = re.compile(r'id="initial-state-core-(\w+)" value="([^"]*)"')
_TOKEN = re.compile(r'data-requesttoken="([^"]*)"')
_MAX_STEPS = 12


def _initial_state(page: httpx.Response) -> dict[str, Any]:
    """The `core` initial state a page hands its script (base64 JSON per key)."""
    return {
        key: json.loads(base64.b64decode(html.unescape(value))) for key, value in _STATE.findall(page.text)
    }


class NextcloudPages:
    """A cookie-keeping HTTP client that signs in and grants access on Nextcloud's pages."""

    def __init__(self, nextcloud_url: str) -> None:
        self.base = nextcloud_url.rstrip("/")  # with its sub-path, if it has one
        parts = urlsplit(self.base)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.browser = httpx.Client(timeout=30, headers={"Accept": "text/html"})
        self.steps: list[str] = []  # where it went, for failure messages
        self.last_state: str | None = None  # the `loginFlowState` of the last page ("done": connected)

    def __enter__(self) -> NextcloudPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.browser.close()

    def follow(self, url: str, user: str, password: str) -> httpx.Response:
        browser = self.browser  # one browser (cookies) for the whole flow
        page = self._get(browser, url)
        for _ in range(_MAX_STEPS):
            if not page.url.host or f"{page.url.scheme}://{page.url.netloc.decode()}" != self.origin:
                return page  # left Nextcloud: our callback, or the client's redirect URI
            state = _initial_state(page)
            if state.get("loginFlowState") == "auth" and "loginFlowAuth" in state:
                after = str(state["loginFlowAuth"]["loginRedirectUrl"]).removeprefix(self.origin)
                page = self._get(browser, f"{self.base}/login?redirect_url={_quoted(after)}")
            elif urlsplit(str(page.url)).path.rstrip("/").endswith("/login"):
                page = self._post(
                    browser,
                    str(page.url.copy_with(query=None)),
                    page,
                    {
                        "user": user,
                        "password": password,
                        "redirect_url": page.url.params.get("redirect_url", ""),
                        "timezone": "UTC",
                        "timezone_offset": "0",
                    },
                )
            elif state.get("loginFlowState") == "grant" and "loginFlowGrant" in state:
                grant = state["loginFlowGrant"]
                form = {"stateToken": grant["stateToken"]}
                for optional in ("clientIdentifier", "providedRedirectUri", "oauthState"):
                    if grant.get(optional) not in (None, ""):
                        form[optional] = str(grant[optional])
                page = self._post(browser, grant["actionUrl"], page, form)
            else:  # Nextcloud's last page ("Account connected": state "done"), or an error page
                self.last_state = state.get("loginFlowState")
                return page
        raise AssertionError(f"no end after {_MAX_STEPS} pages: {self.steps}")

    def _get(self, browser: httpx.Client, url: str) -> httpx.Response:
        page = browser.get(url if "://" in url else self.origin + url, follow_redirects=True)
        self.steps.append(f"GET {page.url} -> {page.status_code}")
        return page

    def _post(
        self, browser: httpx.Client, url: str, page: httpx.Response, form: dict[str, str]
    ) -> httpx.Response:
        token = _TOKEN.search(page.text)
        assert token is not None, f"no requesttoken on {page.url}: {self.steps}"
        headers = {"Origin": self.origin, "requesttoken": html.unescape(token.group(1))}
        answer = browser.post(
            url if "://" in url else self.origin + url,
            data={**form, "requesttoken": html.unescape(token.group(1))},
            headers=headers,
            follow_redirects=True,
        )
        self.steps.append(f"POST {url} -> {answer.url} {answer.status_code}")
        return answer


def _quoted(url: str) -> str:
    return httpx.QueryParams({"u": url}).__str__().removeprefix("u=")
