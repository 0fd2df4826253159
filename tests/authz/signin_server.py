"""The sign-in server the sign-in tests run: this server's sign-in and consent routes on a real
SQLite store, the Nextcloud double's OAuth2 app (or Login Flow v2) behind them, and the person's
browser (httpx with its own cookie jar; tests/offline.sign_in_at_nextcloud fills the double's
login form)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from nextcloud_mcp_server.auth.consent import consent_routes
from nextcloud_mcp_server.authz.requests import (
    CONSENT_PATH,
    SIGNIN_PATH,
    AuthorizationRequest,
    NewRequest,
    StoredAuthorizationRequests,
)
from nextcloud_mcp_server.authz.service import open_connection
from nextcloud_mcp_server.authz.signin import (
    finish_signin,
    signin_routes,
)
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.runtime import Runtime
from tests.conftest import ADMIN_PASSWORD
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.offline import KEY
from tests.processes import free_port

ALICE_PASSWORD = "alice-login-password"
CLIENT_NAME = "Evil <script>alert(1)</script> Assistant"
REDIRECT = "https://client.example/cb"


class Recorded(StoredAuthorizationRequests):
    """The protocol side's requests on the store, remembering what the pages did with them."""

    def __init__(self, db: Any, issuer: str) -> None:
        super().__init__(db, issuer, clock=self.now)
        self.offset = 0.0
        self.signed: list[tuple[str, str]] = []
        self.approved: list[str] = []
        self.declined: list[str] = []

    def now(self) -> float:
        return time.time() + self.offset

    def expire_all(self) -> None:
        self.offset = self.ttl + 1

    async def create_for(self, name: str, redirect_uri: str, scopes: tuple[str, ...]) -> AuthorizationRequest:
        new = NewRequest("client-1", name, redirect_uri, True, scopes, "https://mcp.test/mcp", "c" * 43, "st")
        return await self.create(new)

    async def signed_in(self, request_id: str, user_id: str) -> AuthorizationRequest:
        self.signed.append((request_id, user_id))
        return await super().signed_in(request_id, user_id)

    async def approve(self, request_id: str) -> str:
        answer = await super().approve(request_id)
        self.approved.append(request_id)
        return answer

    async def decline(self, request_id: str) -> str:
        answer = await super().decline(request_id)
        self.declined.append(request_id)
        return answer


class RecordingRuntime(Runtime):
    """The runtime, with the recorded requests as its authorization requests."""

    recorded: Recorded
    loop: asyncio.AbstractEventLoop

    @property
    def authorization_requests(self) -> Recorded:
        return self.recorded


@dataclass
class Server:
    base: str
    runtime: Runtime
    requests: Recorded
    double: NextcloudDouble

    async def new_request(
        self, scopes: tuple[str, ...] = ("notes:read", "calendar:write")
    ) -> AuthorizationRequest:
        return await self.requests.create_for(CLIENT_NAME, REDIRECT, scopes)

    def signin_url(self, request_id: str) -> str:
        return f"{self.base}{SIGNIN_PATH}?request={request_id}"

    def consent_url(self, request_id: str) -> str:
        return f"{self.base}{CONSENT_PATH}?request={request_id}"

    async def grant(self, subject: str) -> Any:
        assert self.runtime.store is not None
        return await self.runtime.store.get_grant(subject)

    async def on_server(self, coroutine: Any) -> Any:
        """Run `coroutine` on the server's event loop (its HTTP pool lives there)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.runtime.loop))

    async def audit(self) -> list[str]:
        assert self.runtime.store is not None
        return [e.event for e in reversed(await self.runtime.store.audit_events("alice"))]


def signin_settings(
    double: NextcloudDouble, double_url: str, base: str, store: Path, **overrides: Any
) -> Any:
    public = overrides.pop("public_base", base)
    client_id, secret = double.login.add_client("MCP server", f"{public}/oauth/callback-nextcloud")
    return load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer="https://idp.invalid",
        mcp_public_url=f"{public}/mcp",
        enable_offline_access=True,
        token_encryption_key=KEY,
        store_path=store,
        **{
            "nextcloud_consent_provider": "nextcloud-oauth2",
            "nextcloud_oauth2_client_id": client_id,
            "nextcloud_oauth2_client_secret": secret,
            **overrides,
        },
    )


@contextlib.contextmanager
def serve(double: NextcloudDouble, double_url: str, store: Path, **overrides: Any) -> Iterator[Server]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = signin_settings(double, double_url, base, store, **overrides)
    runtime = RecordingRuntime(settings)
    requests = Recorded(None, base)
    runtime.recorded = requests

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        runtime.loop = asyncio.get_running_loop()
        async with runtime:
            assert runtime.store is not None
            requests._db = await open_connection(runtime.store)  # type: ignore[attr-defined]
            yield

    app = Starlette(routes=signin_routes(runtime) + consent_routes(runtime, finish_signin), lifespan=lifespan)
    with serve_in_thread(app, port=port):
        yield Server(base, runtime, requests, double)


def new_browser() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=15)


async def sign_in(
    browser: httpx.AsyncClient, server: Server, request_id: str, user: str = "alice"
) -> httpx.Response:
    """Open the sign-in link, sign in at the double and grant; the answer of our callback."""
    to_nextcloud = await browser.get(server.signin_url(request_id))
    assert to_nextcloud.status_code == 303, to_nextcloud.text
    page = await browser.get(to_nextcloud.headers["location"], follow_redirects=True)
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    token = re.search(r'name="token" value="([^"]+)"', page.text)
    assert action is not None, page.text[:300]
    assert token is not None, page.text[:300]
    password = ALICE_PASSWORD if user == "alice" else ADMIN_PASSWORD
    answer = await browser.post(
        page.url.join(action.group(1)), data={"token": token.group(1), "user": user, "password": password}
    )
    assert answer.status_code in (302, 303), answer.text[:300]
    return await browser.get(answer.headers["location"])


async def consent_form(browser: httpx.AsyncClient, server: Server, request_id: str) -> dict[str, str]:
    page = await browser.get(server.consent_url(request_id))
    assert page.status_code == 200, page.text
    return dict(re.findall(r"<input type=hidden name=(\w+) value='([^']*)'>", page.text))
