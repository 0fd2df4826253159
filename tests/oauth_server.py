"""The server as an OAuth resource server for tests: started in a thread in front of the
Nextcloud double and a real OpenID provider (`oauth_server`, the `server` fixture), the tools a
deployment offers by default, and the claims of a token for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL
from nextcloud_mcp_server.tools._registry import ToolSpec
from tests.mcp_clients import MCP_HEADERS
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.nextcloud_double.tokens import idp_jwt_validator
from tests.oidc import IdP
from tests.processes import free_port

__all__ = ["ON_DEMAND", "OAuthServer", "claims", "default_tools", "oauth_server", "server_fixture"]


def default_tools() -> list[ToolSpec]:
    """The tools a deployment offers without NEXTCLOUD_MCP_TOOLSETS: those of the default toolsets."""
    return [spec for spec in all_tools() if spec.toolset in DEFAULT_TOOLSETS]


# Listed to everyone beside the default tools: the two that reach the other toolsets on demand
# (docs/ADR/0070); they need no scope, and what they call keeps its own (tests/apps/test_on_demand_oauth.py).
ON_DEMAND = {TOOLSETS_TOOL, CALL_TOOL}


@dataclass
class OAuthServer:
    base: str
    settings: Settings

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"

    def post(self, token: str | None, message: dict[str, Any], session: str | None = None) -> httpx.Response:
        headers = dict(MCP_HEADERS)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if session:
            headers["Mcp-Session-Id"] = session
        return httpx.post(self.mcp, json=message, headers=headers, timeout=10)


@contextmanager
def oauth_server(
    double: NextcloudDouble, double_url: str, idp: IdP, **overrides: Any
) -> Iterator[OAuthServer]:
    double.accounts.add_bearer_validator(idp_jwt_validator(idp.issuer))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer=idp.issuer,
        mcp_public_url=f"{base}/mcp",
        oidc_client_id="mcp-server",
        oidc_client_secret="mcp-server-secret",
        **overrides,
    )
    with serve_in_thread(create_app(settings), port=port):
        yield OAuthServer(base, settings)


@pytest.fixture(name="server")
def server_fixture(double: NextcloudDouble, double_url: str, idp: IdP) -> Iterator[OAuthServer]:
    with oauth_server(double, double_url, idp) as running:
        yield running


def claims(server: OAuthServer, idp: IdP, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {
        "iss": idp.issuer,
        "sub": "admin",
        "aud": server.mcp,
        "iat": now,
        "exp": now + 600,
        "scope": "notes:read notes:write",
        "client_id": "test-client",
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}
