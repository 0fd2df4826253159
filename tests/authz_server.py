"""This server as its own authorization server, running: a real SQLite store, the app on a
loopback port, and helpers that play the MCP client's side of OAuth (PKCE, /authorize, /token)
and stand in for the person (sign-in and approval go straight to `runtime.authorization_requests`
- the pages are tested with a browser elsewhere)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.storage.crypto import generate_key
from nextcloud_mcp_server.tools import tool_scopes
from nextcloud_mcp_server.web.front import uvicorn_options
from tests.nextcloud_double.server import serve_in_thread
from tests.processes import free_port
from tests.tls import httpx_verify

if TYPE_CHECKING:
    from tests.backends import Nextcloud

__all__ = ["AuthzServer", "Pkce", "authz_server"]

KEY = generate_key()
T = TypeVar("T")


class LoopRuntime(Runtime):
    """The runtime, remembering the event loop the server runs it on (the test calls into it)."""

    loop: asyncio.AbstractEventLoop

    async def __aenter__(self) -> LoopRuntime:
        self.loop = asyncio.get_running_loop()
        await super().__aenter__()
        return self


@dataclass
class Pkce:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).decode().rstrip("="))


@dataclass
class AuthzServer:
    base: str
    settings: Settings
    runtime: LoopRuntime

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's own event loop (its store connection lives there)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.runtime.loop).result(timeout=30)

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=15, follow_redirects=False, verify=httpx_verify())

    def register(self, redirect_uri: str, **extra: Any) -> dict[str, Any]:
        """A public client by dynamic registration."""
        body = {"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none", **extra}
        with self.http() as http:
            answer = http.post("/register", json=body)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    def authorize(self, client_id: str, redirect_uri: str, pkce: Pkce, **extra: str | None) -> httpx.Response:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce.challenge,
            "code_challenge_method": "S256",
            "state": "st-" + secrets.token_urlsafe(8),
            "resource": self.mcp,
            **extra,
        }
        with self.http() as http:  # a None in `extra` leaves that parameter out
            return http.get("/authorize", params={k: v for k, v in params.items() if v is not None})

    def approve(self, signin_url: str, user: str) -> str:
        """The person signs in as `user` and approves; returns where the browser goes next."""
        request_id = parse_qs(urlsplit(signin_url).query)["request"][0]
        requests = self.runtime.authorization_requests
        self.run(requests.signed_in(request_id, user))
        return self.run(requests.approve(request_id))

    def code_for(self, client_id: str, redirect_uri: str, pkce: Pkce, user: str = "alice") -> str:
        answer = self.authorize(client_id, redirect_uri, pkce)
        assert answer.status_code == 302, answer.text
        landed = self.approve(answer.headers["location"], user)
        return parse_qs(urlsplit(landed).query)["code"][0]

    def token(self, **form: str) -> httpx.Response:
        with self.http() as http:
            return http.post("/token", data=form)

    def tokens_for(self, user: str = "alice", redirect_uri: str = "http://127.0.0.1:9/cb") -> dict[str, Any]:
        """A fresh client, its code for `user`, exchanged: the token answer plus client_id."""
        client = self.register(redirect_uri)
        pkce = Pkce.new()
        code = self.code_for(client["client_id"], redirect_uri, pkce, user)
        answer = self.token(
            grant_type="authorization_code", code=code, redirect_uri=redirect_uri,
            client_id=client["client_id"], code_verifier=pkce.verifier,
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        return {**answer.json(), "client_id": client["client_id"]}


@contextmanager
def authz_server(nextcloud_url: str, store_path: Path, **overrides: Any) -> Iterator[AuthzServer]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    wanted: dict[str, Any] = {
        "nextcloud_host": nextcloud_url,
        "mcp_public_url": f"{base}/mcp",
        "auth_server_enabled": True,
        # people sign in through Nextcloud's OAuth2 app (no sign-in is driven here: `approve`
        # stands in for the person), so a client that Nextcloud never sees will do
        "nextcloud_consent_provider": "nextcloud-oauth2",
        "nextcloud_oauth2_client_id": "mcp-server-at-nextcloud",
        "nextcloud_oauth2_client_secret": "not-used-by-these-tests",
        "token_encryption_key": KEY,
        "store_path": store_path,
        "auth_server_cimd_allow_private": True,  # the documents' test server is on loopback
        **overrides,
    }
    settings = load_settings(env_file=None, **wanted)
    runtime = LoopRuntime(settings, scopes=tool_scopes(settings))
    # uvicorn as `run` configures it: the front's protocol and its proxy-header handling
    with serve_in_thread(create_app(settings, runtime=runtime), port=port, **uvicorn_options(settings)):
        yield AuthzServer(base, settings, runtime)


@contextmanager
def nextcloud_signin_server(nextcloud: Nextcloud, store: Path, **overrides: Any) -> Iterator[AuthzServer]:
    """This server as authorization server, signing people in through the real Nextcloud's OAuth2
    app (a client registered there for our one callback)."""
    assert nextcloud.instance is not None
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    client = nextcloud.instance.oauth_client(f"MCP server {port}", f"{base}/oauth/callback-nextcloud")
    wanted: dict[str, Any] = {
        "nextcloud_host": nextcloud.url,
        "mcp_public_url": f"{base}/mcp",
        "auth_server_enabled": True,
        "nextcloud_consent_provider": "nextcloud-oauth2",
        "nextcloud_oauth2_client_id": client["client_id"],
        "nextcloud_oauth2_client_secret": client["client_secret"],
        "token_encryption_key": KEY,
        "store_path": store,
    }
    settings = load_settings(env_file=None, **{**wanted, **overrides})
    runtime = LoopRuntime(settings, scopes=tool_scopes(settings))
    with serve_in_thread(create_app(settings, runtime=runtime), port=port):
        yield AuthzServer(base, settings, runtime)
