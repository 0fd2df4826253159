"""Offline access, running: the server with a real IdP, a real SQLite store and the Nextcloud
double; a "browser" that follows the consent link; and a helper that provisions a user through
the real flow."""

from __future__ import annotations

import asyncio
import html
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx
import pytest
from mcp.types import ElicitCompleteNotification

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.auth.offline import OfflineCredentials
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.storage.crypto import generate_key
from nextcloud_mcp_server.tools import tool_scopes
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.nextcloud_double.tokens import idp_jwt_validator
from tests.oidc import IdP
from tests.processes import free_port

__all__ = [
    "CONSENT_META",
    "KEY",
    "Completions",
    "OfflineServer",
    "browse",
    "offline_server",
    "provision",
    "real_offline_server",
    "server_fixture",
    "sign_in_at_nextcloud",
    "walk_to_callback",
]

KEY = generate_key()
CONSENT_META = "nextcloud-mcp/consent"


@dataclass
class OfflineServer:
    base: str
    settings: Settings
    idp: IdP
    runtime: Runtime | None = None  # when the test made it (real_offline_server with a clock)

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    def token(self, user: str) -> str:
        return self.idp.access_token(user=user, resource=self.mcp)

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(user)}"}

    def store_rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.settings.store_path) as db:
            return list(db.execute(query, args))

    def grants(self) -> list[str]:
        return [row[0] for row in self.store_rows("SELECT subject FROM grants ORDER BY subject")]


@contextmanager
def offline_server(
    double: NextcloudDouble,
    double_url: str,
    idp: IdP,
    store_path: Path,
    port: int | None = None,
    **overrides: Any,
) -> Iterator[OfflineServer]:
    """The server in offline-access mode. With the default consent provider (`oidc`) the double
    trusts the IdP's tokens, as a Nextcloud with user_oidc does; with `nextcloud-oauth2` or
    `login-flow-v2` it does not - the IdP then only authenticates MCP clients to this server -
    and for `nextcloud-oauth2` a client is registered in the double's OAuth2 app."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    callback = f"{base}/oauth/callback-nextcloud"
    provider = overrides.get("nextcloud_consent_provider", "oidc")
    if provider == "oidc":
        double.accounts.add_bearer_validator(idp_jwt_validator(idp.issuer))
        client_id, secret = idp.register_confidential(callback)
        overrides = {"oidc_client_id": client_id, "oidc_client_secret": secret, **overrides}
    if provider == "nextcloud-oauth2" and "nextcloud_oauth2_client_id" not in overrides:
        client_id, secret = double.login.add_client("MCP server", callback)
        overrides = {
            "nextcloud_oauth2_client_id": client_id,
            "nextcloud_oauth2_client_secret": secret,
            **overrides,
        }
    settings = load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer=idp.issuer,
        mcp_public_url=f"{base}/mcp",
        enable_offline_access=True,
        token_encryption_key=KEY,
        store_path=store_path,
        nextcloud_resource=double_url,
        **overrides,
    )
    with serve_in_thread(create_app(settings), port=port):
        yield OfflineServer(base, settings, idp)


@contextmanager
def real_offline_server(
    nextcloud: Nextcloud,
    idp: IdP,
    store_path: Path,
    provider: str,
    clock: Callable[[], float] | None = None,
    **overrides: Any,
) -> Iterator[OfflineServer]:
    """The server in offline-access mode in front of the real Nextcloud, with Nextcloud itself as
    the consent provider (`nextcloud-oauth2` or `login-flow-v2`). The IdP only authenticates MCP
    clients; its `preferred_username` (OIDC_USER_CLAIM) is the Nextcloud user id. For
    `nextcloud-oauth2` a client for this server's own callback is registered in Nextcloud.
    `clock`: what the stored credentials' expiry is judged by (a test moves it, not the time)."""
    assert nextcloud.instance is not None, "the real Nextcloud only"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    if provider == "nextcloud-oauth2":
        client = nextcloud.instance.oauth_client(f"MCP server {port}", f"{base}/oauth/callback-nextcloud")
        overrides = {
            "nextcloud_oauth2_client_id": client["client_id"],
            "nextcloud_oauth2_client_secret": client["client_secret"],
            **overrides,
        }
    settings = load_settings(
        env_file=None,
        nextcloud_host=overrides.pop("nextcloud_host", nextcloud.url),
        oidc_issuer=idp.issuer,
        mcp_public_url=f"{base}/mcp",
        enable_offline_access=True,
        token_encryption_key=KEY,
        store_path=store_path,
        nextcloud_consent_provider=provider,
        **overrides,
    )
    runtime = Runtime(settings, scopes=tool_scopes(settings))
    if clock is not None:
        assert runtime.store is not None
        runtime.credentials = OfflineCredentials(runtime.store, runtime.consent_providers, clock=clock)
    with serve_in_thread(create_app(settings, runtime=runtime), port=port):
        yield OfflineServer(base, settings, idp, runtime)


class Completions:
    def __init__(self) -> None:
        self.seen: dict[str, anyio.Event] = {}

    def event(self, elicitation_id: str) -> anyio.Event:
        return self.seen.setdefault(elicitation_id, anyio.Event())

    async def handler(self, message: Any) -> None:
        if isinstance(message, ElicitCompleteNotification):
            self.event(message.params.elicitation_id).set()


def browse(url: str) -> httpx.Response:
    """A person's browser: follows every redirect (cookies kept) to the final page."""
    with httpx.Client(follow_redirects=True, timeout=15) as browser:
        return browser.get(url)


def sign_in_at_nextcloud(url: str, user: str, password: str) -> httpx.Response:
    """A person's browser on a consent link that leads to Nextcloud's sign-in page: follows the
    redirects there, signs in as `user` and grants access, then follows wherever Nextcloud sends
    it (our callback, or Nextcloud's own "Account connected" page)."""
    with httpx.Client(follow_redirects=True, timeout=15) as browser:
        page = browser.get(url)
        assert page.status_code == 200, (page.status_code, page.text[:300])
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        token = re.search(r'name="token" value="([^"]+)"', page.text)
        assert action is not None, page.text[:300]
        assert token is not None, page.text[:300]
        target = page.url.join(html.unescape(action.group(1)))
        form = {"token": html.unescape(token.group(1)), "user": user, "password": password}
        return browser.post(target, data=form)


async def provision(server: OfflineServer, user: str) -> None:
    """Give `user` a grant through the real flow (no-elicitation client: the link is in _meta)."""
    async with http_session(server.mcp, headers=server.headers(user)) as session:
        asked = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        assert asked.is_error
        url = (asked.meta or {})[CONSENT_META]["url"]
        assert url in asked.content[0].text  # type: ignore[union-attr]
        page = await asyncio.to_thread(browse, url)
        assert "Connected" in page.text, page.text
        listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        assert listed["total"] >= 0


@pytest.fixture(name="server")
def server_fixture(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> Iterator[OfflineServer]:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as running:
        yield running


def walk_to_callback(url: str, *, change: dict[str, str] | None = None) -> str:
    """Follow the consent link until the IdP redirects to our callback; return that URL.
    `change` edits the query of the IdP's authorize request (e.g. another login_hint)."""
    with httpx.Client(timeout=15) as browser:
        for _ in range(20):
            response = browser.get(url)
            assert response.status_code in (302, 303), (response.status_code, response.text[:200])
            target = str(httpx.URL(url).join(response.headers["location"]))
            if change and "/auth?" in target:
                parts = urlsplit(target)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()} | change
                target = parts._replace(query=urlencode(query)).geturl()
                change = None
            if "/oauth/callback-nextcloud" in target:
                return target
            url = target
    raise AssertionError("never reached the callback")
