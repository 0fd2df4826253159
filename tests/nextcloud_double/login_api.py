"""Nextcloud's own credential hand-outs, for the double: the OAuth2 app and Login Flow v2.

Shaped like the recordings (`oauth2_*.txt`) and Nextcloud's code where nothing was recorded:
- OAuth2 app: `GET /index.php/apps/oauth2/authorize` sends the browser to the login pages
  (`/index.php/login/flow?clientIdentifier=...`), where the person signs in and grants access;
  Nextcloud then redirects to the client's *registered* redirect URI with `state` and `code`.
  `POST /index.php/apps/oauth2/api/v1/token` (client id/secret in the form or as Basic) answers
  `{access_token, token_type, expires_in: 3600, refresh_token, user_id}`; every refresh rotates both
  tokens; an unknown or used code/refresh token gets `400 {"error": "invalid_request"}`, a wrong
  client `400 {"error": "invalid_client"}`. PKCE is verified when a challenge was sent (as newer
  Nextcloud releases do; 29 ignores it). The access token works as Bearer and as a Basic password.
- Login Flow v2: `POST /index.php/login/v2` -> `{poll: {token, endpoint}, login}`; the person opens
  `login`, signs in and grants; `POST /index.php/login/v2/poll` (form `token`) answers 404 until
  then and `{server, loginName, appPassword}` once.
- `DELETE /ocs/v2.php/core/apppassword` deletes the app password (or OAuth2 token) the request
  used; 403 for a login password.

The sign-in pages are minimal forms (`user`, `password`, hidden fields) that tests fill in.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from tests.nextcloud_double.users import Accounts

__all__ = ["LoginAPI"]

_NO_STORE = {"Cache-Control": "no-cache, no-store, must-revalidate"}


@dataclass
class _Client:
    name: str
    redirect_uri: str
    secret: str


@dataclass
class _OAuthGrant:
    """One authorization: its current code or refresh token and its current access token."""

    client_id: str
    user_id: str
    code: str
    code_created: float
    challenge: str | None
    access_token: str = ""
    access_expires: float = 0.0
    delivered: int = 0


@dataclass
class _Flow:
    login_token: str
    created: float
    user_agent: str
    login_name: str | None = None
    app_password: str | None = None
    collected: bool = False


@dataclass
class LoginAPI:
    accounts: Accounts
    access_ttl: float = 3600.0
    clients: dict[str, _Client] = field(default_factory=dict)
    _grants: list[_OAuthGrant] = field(default_factory=list)
    _pending: dict[str, dict[str, str]] = field(default_factory=dict)  # login page -> authorize query
    _flows: dict[str, _Flow] = field(default_factory=dict)  # poll token -> flow
    _lock: threading.Lock = field(default_factory=threading.Lock)
    deleted: list[str] = field(default_factory=list)  # user ids whose credential was deleted

    def __post_init__(self) -> None:
        self.accounts.add_bearer_validator(self.access_user, as_basic_password=True)

    # --- admin side

    def add_client(self, name: str, redirect_uri: str) -> tuple[str, str]:
        """Administration settings > Security > OAuth 2.0 clients: returns (client id, secret)."""
        client_id, secret = secrets.token_urlsafe(48)[:64], secrets.token_urlsafe(48)[:64]
        self.clients[client_id] = _Client(name, redirect_uri, secret)
        return client_id, secret

    def oauth_grants(self, user_id: str) -> int:
        """How many OAuth2 authorizations of `user_id` are alive (issued and not deleted)."""
        return sum(1 for g in self._grants if g.user_id == user_id and g.delivered)

    def revoke_all(self, user_id: str) -> None:
        """The person removes every device and app in Settings > Security."""
        with self._lock:
            self._grants = [g for g in self._grants if g.user_id != user_id]
            for password in list(self.accounts[user_id].app_passwords):
                self.accounts.revoke_app_password(user_id, password)

    def access_user(self, token: str) -> str | None:
        now = time.time()
        for grant in self._grants:
            if grant.access_token and secrets.compare_digest(grant.access_token, token):
                return grant.user_id if grant.access_expires > now else None
        return None

    # --- routes

    async def handle(self, request: Request) -> Response | None:
        path, method = request.url.path, request.method
        if path == "/index.php/apps/oauth2/authorize" and method == "GET":
            return self._authorize(request)
        if path == "/index.php/login/flow" and method == "GET":
            return self._login_page(request.query_params.get("pending", ""), "/index.php/login/flow/grant")
        if path == "/index.php/login/flow/grant" and method == "POST":
            return await self._grant_oauth(request)
        if path == "/index.php/apps/oauth2/api/v1/token" and method == "POST":
            return await self._token(request)
        if path == "/index.php/login/v2" and method == "POST":
            return self._start_flow(request)
        if path.startswith("/index.php/login/v2/flow/") and method == "GET":
            return self._login_page(path.rsplit("/", 1)[1], "/index.php/login/v2/grant")
        if path == "/index.php/login/v2/grant" and method == "POST":
            return await self._grant_flow(request)
        if path == "/index.php/login/v2/poll" and method == "POST":
            return await self._poll(request)
        return None

    def _authorize(self, request: Request) -> Response:
        query = dict(request.query_params)
        client = self.clients.get(query.get("client_id", ""))
        if client is None or query.get("response_type") != "code":
            return HTMLResponse("<h1>Your client is not authorized to connect.</h1>", status_code=400)
        pending = secrets.token_urlsafe(16)
        self._pending[pending] = query
        location = (
            f"/index.php/login/flow?{urlencode({'clientIdentifier': query['client_id'], 'pending': pending})}"
        )
        return RedirectResponse(location, status_code=303, headers=_NO_STORE)

    def _login_page(self, hidden: str, action: str) -> Response:
        if hidden not in self._pending and hidden not in {f.login_token for f in self._flows.values()}:
            return HTMLResponse("<h1>Token expired</h1>", status_code=403)
        body = (
            "<!DOCTYPE html><html><body><h1>Connect to your account</h1>"
            f'<form method="post" action="{action}">'
            f'<input type="hidden" name="token" value="{html.escape(hidden)}">'
            '<input name="user"><input type="password" name="password">'
            '<button type="submit">Grant access</button></form></body></html>'
        )
        return HTMLResponse(body, headers=_NO_STORE)

    async def _signed_in(self, request: Request) -> tuple[str | None, dict[str, str]]:
        form = {k: str(v) for k, v in (await request.form()).items()}
        raw = f"{form.get('user', '')}:{form.get('password', '')}".encode()
        caller = self.accounts.authenticate("Basic " + base64.b64encode(raw).decode())
        return (caller.user_id if caller else None), form

    async def _grant_oauth(self, request: Request) -> Response:
        user_id, form = await self._signed_in(request)
        query = self._pending.get(form.get("token", ""))
        if query is None:
            return HTMLResponse("<h1>Token expired</h1>", status_code=403)
        if user_id is None:
            return HTMLResponse("<h1>Wrong login or password.</h1>", status_code=403)
        del self._pending[form["token"]]
        client = self.clients[query["client_id"]]
        challenge = query.get("code_challenge") if query.get("code_challenge_method") == "S256" else None
        code = secrets.token_urlsafe(96)[:128]
        with self._lock:
            self._grants.append(_OAuthGrant(query["client_id"], user_id, code, time.time(), challenge))
        location = f"{client.redirect_uri}?{urlencode({'state': query.get('state', ''), 'code': code})}"
        return RedirectResponse(location, status_code=303, headers=_NO_STORE)

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        grant_type = form.get("grant_type")
        if grant_type not in ("authorization_code", "refresh_token"):
            return _error("invalid_grant")
        code = form.get("code") if grant_type == "authorization_code" else form.get("refresh_token")
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        authorization = request.headers.get("authorization", "")
        if authorization.lower().startswith("basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
        with self._lock:
            grant = next((g for g in self._grants if code and secrets.compare_digest(g.code, code)), None)
            if grant is None:
                return _error("invalid_request")
            if grant_type == "authorization_code":
                if grant.delivered or grant.code_created < time.time() - 600:
                    return _error("invalid_request")
                if grant.challenge is not None and not _pkce_ok(
                    grant.challenge, form.get("code_verifier", "")
                ):
                    return _error("invalid_grant")
            client = self.clients.get(grant.client_id)
            if client is None or client_id != grant.client_id or secret != client.secret:
                return _error("invalid_client")
            grant.code = secrets.token_urlsafe(96)[:128]  # rotation: the old one is spent
            grant.access_token = secrets.token_urlsafe(54)[:72]
            grant.access_expires = time.time() + self.access_ttl
            grant.delivered += 1
            answer = {
                "access_token": grant.access_token,
                "token_type": "Bearer",
                "expires_in": int(self.access_ttl),
                "refresh_token": grant.code,
                "user_id": grant.user_id,
            }
        return JSONResponse(answer, headers=_NO_STORE)

    def _start_flow(self, request: Request) -> Response:
        poll_token, login_token = secrets.token_urlsafe(96)[:128], secrets.token_urlsafe(96)[:128]
        self._flows[poll_token] = _Flow(login_token, time.time(), request.headers.get("user-agent", ""))
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "poll": {"token": poll_token, "endpoint": f"{base}/index.php/login/v2/poll"},
                "login": f"{base}/index.php/login/v2/flow/{login_token}",
            }
        )

    async def _grant_flow(self, request: Request) -> Response:
        user_id, form = await self._signed_in(request)
        flow = next((f for f in self._flows.values() if f.login_token == form.get("token")), None)
        if flow is None or flow.created < time.time() - 1200:
            return HTMLResponse("<h1>Token expired</h1>", status_code=403)
        if user_id is None:
            return HTMLResponse("<h1>Wrong login or password.</h1>", status_code=403)
        flow.login_name = form.get("user", "")
        flow.app_password = self.accounts.add_app_password(user_id)
        return HTMLResponse("<h1>Account connected</h1><p>You can close this window.</p>")

    async def _poll(self, request: Request) -> Response:
        token = str((await request.form()).get("token", ""))
        with self._lock:
            flow = self._flows.get(token)
            if flow is None or flow.app_password is None or flow.collected:
                return JSONResponse([], status_code=404)
            flow.collected = True
            del self._flows[token]
        server = str(request.base_url).rstrip("/")
        return JSONResponse(
            {"server": server, "loginName": flow.login_name, "appPassword": flow.app_password}
        )

    def delete_app_password(self, user_id: str, token: str | None) -> bool:
        """`DELETE /ocs/v2.php/core/apppassword`: the credential the request used, if any."""
        if token is None:
            return False
        with self._lock:
            before = len(self._grants)
            self._grants = [g for g in self._grants if g.access_token != token]
            removed = len(self._grants) < before or self.accounts.revoke_app_password(user_id, token)
        if removed:
            self.deleted.append(user_id)
        return removed


def _pkce_ok(challenge: str, verifier: str) -> bool:
    digest = hashlib.sha256(verifier.encode()).digest()
    return secrets.compare_digest(base64.urlsafe_b64encode(digest).rstrip(b"=").decode(), challenge)


def _error(code: str) -> Response:
    return JSONResponse({"error": code}, status_code=400, headers=_NO_STORE)
