"""OIDC_OPAQUE_TOKENS=nextcloud over HTTP (issue 31, finding 13): a flood of made-up bearer
tokens from one address reaches Nextcloud a few times, then gets 429 with Retry-After; a real
user behind the same proxy but another address keeps working."""

from __future__ import annotations

import secrets

import httpx
import pytest

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.web.front import uvicorn_options
from tests.mcp_clients import INITIALIZE, MCP_HEADERS
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.processes import free_port

pytestmark = pytest.mark.integration


def test_unknown_bearer_tokens_are_bounded_per_address(double: NextcloudDouble, double_url: str) -> None:
    asked: list[str] = []

    def nextcloud_knows(token: str) -> str | None:
        asked.append(token)
        return {"nc-oauth2-token-for-alice": "alice"}.get(token)

    double.accounts.add_bearer_validator(nextcloud_knows, as_basic_password=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer="https://idp.invalid",  # never asked: opaque tokens go to Nextcloud
        mcp_public_url=f"{base}/mcp",
        oidc_opaque_tokens="nextcloud",
        oidc_opaque_refusals_per_minute=5,
        forwarded_allow_ips="127.0.0.1",  # the test plays the reverse proxy
    )

    def post(token: str, client: str) -> httpx.Response:
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", "X-Forwarded-For": client}
        return httpx.post(f"{base}/mcp", json=INITIALIZE, headers=headers, timeout=10)

    with serve_in_thread(create_app(settings), port=port, **uvicorn_options(settings)):
        flood = [post(secrets.token_urlsafe(24), "198.51.100.66") for _ in range(40)]
        user = post("nc-oauth2-token-for-alice", "203.0.113.1")
    assert [answer.status_code for answer in flood] == [401] * 5 + [429] * 35
    assert 1 <= int(flood[-1].headers["retry-after"]) <= 60
    assert "too many unknown bearer tokens" in flood[-1].json()["error_description"]
    assert user.status_code == 200, user.text
    assert len(asked) == 6  # five made-up tokens and alice's
