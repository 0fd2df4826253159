"""Nextcloud's own ways to hand out credentials: its OAuth2 app and Login Flow v2.

- OAuth2 app (`/index.php/apps/oauth2/...`): authorization code flow with a client the admin
  registers. Tokens are opaque; the access token lives an hour and is also accepted as a Basic
  password; every refresh rotates both tokens, and an unknown refresh token gets `400
  {"error": "invalid_request"}` (not `invalid_grant`). Nextcloud 29 ignores PKCE parameters; later
  releases verify them, so they are always sent.
- Login Flow v2 (`POST /index.php/login/v2`): the person opens the returned login URL, signs in and
  grants access; polling the returned endpoint answers 404 until then, and 200 with the login name
  and a new app password exactly once. A flow lives 20 minutes.

No MCP and no storage here: the consent providers (`auth/consent_providers.py`) use these.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudError, NotFound
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.numbers import lifetime

__all__ = [
    "AUTHORIZE_PATH",
    "LOGIN_FLOW_PATH",
    "TOKEN_PATH",
    "AppPassword",
    "LoginFlow",
    "LoginFlowV2",
    "NextcloudOAuth2",
    "NextcloudTokens",
    "OAuth2Refused",
]

AUTHORIZE_PATH = "/index.php/apps/oauth2/authorize"
TOKEN_PATH = "/index.php/apps/oauth2/api/v1/token"  # noqa: S105 - a path, not a secret
LOGIN_FLOW_PATH = "/index.php/login/v2"
_FORM = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}


class OAuth2Refused(Exception):
    """Nextcloud's token endpoint said no. `error` is its OAuth error code; `token_rejected` is
    true when the code or refresh token itself is no longer valid (ask the person again)."""

    def __init__(self, error: str) -> None:
        super().__init__(f"Nextcloud refused the token request ({error})")
        self.error = error

    @property
    def token_rejected(self) -> bool:
        return self.error in ("invalid_request", "invalid_grant")


@dataclass(frozen=True)
class NextcloudTokens:
    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    expires_in: float
    user_id: str


@dataclass(frozen=True)
class LoginFlow:
    login_url: str  # for the person's browser
    poll_token: str = field(repr=False)
    poll_path: str  # on NEXTCLOUD_HOST


@dataclass(frozen=True)
class AppPassword:
    login_name: str
    password: str = field(repr=False)


class NextcloudOAuth2:
    """This server as a client of Nextcloud's OAuth2 app."""

    def __init__(self, http: NextcloudHTTP, client_id: str, client_secret: str, browser_url: str) -> None:
        self._http = http
        self.client_id = client_id
        self._secret = client_secret
        self._browser_url = browser_url.rstrip("/")

    def authorization_url(self, *, redirect_uri: str, state: str, challenge: str) -> str:
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        return f"{self._browser_url}{AUTHORIZE_PATH}?{urlencode(query)}"

    async def _token(self, form: dict[str, str]) -> NextcloudTokens:
        body = urlencode({**form, "client_id": self.client_id, "client_secret": self._secret})
        response = await self._http.request(
            "POST", TOKEN_PATH, credential=None, headers=_FORM, content=body, accept={400, 401}
        )
        answer: Any = json_body(response, self._http.host)
        if not isinstance(answer, dict):
            raise InvalidResponse(self._http.host, "the OAuth2 token answer is not a JSON object")
        if response.status_code != 200 or "access_token" not in answer:
            raise OAuth2Refused(str(answer.get("error") or f"http_{response.status_code}"))
        try:
            return NextcloudTokens(
                access_token=str(answer["access_token"]),
                refresh_token=str(answer["refresh_token"]),
                expires_in=lifetime(answer.get("expires_in"), 3600),
                user_id=str(answer["user_id"]),
            )
        except (KeyError, TypeError, ValueError):
            raise InvalidResponse(
                self._http.host, "the OAuth2 token answer lacks refresh_token or user_id"
            ) from None

    async def exchange_code(self, code: str, verifier: str, redirect_uri: str) -> NextcloudTokens:
        return await self._token(
            {
                "grant_type": "authorization_code",
                "code": code,
                "code_verifier": verifier,
                "redirect_uri": redirect_uri,
            }
        )

    async def refresh(self, refresh_token: str) -> NextcloudTokens:
        """New tokens; the refresh token given is no longer valid afterwards."""
        return await self._token({"grant_type": "refresh_token", "refresh_token": refresh_token})

    async def answers_unknown_tokens(self) -> bool:
        """Whether the token endpoint works: a made-up refresh token gets its OAuth error (a 400
        with JSON), which takes Nextcloud, its database and the oauth2 app answering. A 5xx for
        one grant while this holds is that grant's fault (Nextcloud's 500 "HMAC does not match")."""
        try:
            await self.refresh(secrets.token_urlsafe(48))
        except OAuth2Refused:
            return True
        except NextcloudError:
            return False
        return False  # it accepted a made-up token: nothing it says can be judged


class LoginFlowV2:
    """Login Flow v2: a new app password, granted by the person in Nextcloud's own pages.
    `browser_url` (NEXTCLOUD_PUBLIC_URL) replaces the address in the login URL Nextcloud returns,
    which it builds from the address it was asked on - possibly an internal one."""

    def __init__(self, http: NextcloudHTTP, browser_url: str | None = None) -> None:
        self._http = http
        self._browser_url = browser_url.rstrip("/") if browser_url else None

    def _relative(self, url: str) -> str:
        """`url`'s path (and query) below Nextcloud's base path."""
        parts = urlsplit(url)
        path, own = parts.path, self._http.base_path
        if own and path.startswith(own + "/"):
            path = path[len(own) :]
        return path + (f"?{parts.query}" if parts.query else "")

    async def start(self, user_agent: str) -> LoginFlow:
        """Begin a flow; `user_agent` is the name Nextcloud shows for the new app password."""
        response = await self._http.request(
            "POST", LOGIN_FLOW_PATH, credential=None, headers={"User-Agent": user_agent, **_FORM}
        )
        answer: Any = json_body(response, self._http.host)
        try:
            login, poll = str(answer["login"]), answer["poll"]
            token, endpoint = str(poll["token"]), str(poll["endpoint"])
        except (KeyError, TypeError):
            raise InvalidResponse(self._http.host, "the Login Flow v2 answer lacks login or poll") from None
        if self._browser_url:
            login = self._browser_url + self._relative(login)
        return LoginFlow(login, token, urlsplit(self._relative(endpoint)).path)

    async def poll(self, flow: LoginFlow) -> AppPassword | None:
        """The app password once the person granted access (answered only once), else None."""
        try:
            response = await self._http.request(
                "POST",
                flow.poll_path,
                credential=None,
                headers=_FORM,
                content=urlencode({"token": flow.poll_token}),
            )
        except NotFound:
            return None
        answer: Any = json_body(response, self._http.host)
        try:
            return AppPassword(str(answer["loginName"]), str(answer["appPassword"]))
        except (KeyError, TypeError):
            raise InvalidResponse(
                self._http.host, "the Login Flow v2 poll answer lacks the app password"
            ) from None
