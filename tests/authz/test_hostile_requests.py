"""Requests an anonymous client can send that raised inside this server, a 500, before: found by a
review of every inbound edge. Through the real HTTP front (uvicorn as `run` starts it) and, where
the store is what failed, a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.authz_server import AuthzServer, authz_server
from tests.postgres import PostgresCluster

FORM = {"content-type": "application/x-www-form-urlencoded"}
QUERIES = [
    "/oauth/signin?request=a%00b",
    "/oauth/consent?request=a%00b",
    "/oauth/authorize-nextcloud?elicitation=a%00b",
    "/oauth/callback-nextcloud?state=a%00b&code=x",
    "/authorize?client_id=a%00b&response_type=code&redirect_uri=http://127.0.0.1:9/cb",
]


@pytest.fixture
def server(double_url: str, tmp_path: Path) -> Iterator[AuthzServer]:
    with authz_server(double_url, tmp_path / "store.sqlite3") as running:
        yield running


def test_a_nul_in_a_query_or_a_form_is_refused_before_postgresql_sees_it(
    double_url: str, tmp_path: Path, postgres: PostgresCluster
) -> None:
    """PostgreSQL refuses text holding NUL: each of these raised DataError from the store."""
    with (
        postgres.database() as url,
        authz_server(double_url, tmp_path / "unused.sqlite3", store_url=url) as server,
    ):
        for path in QUERIES:
            answer = httpx.get(server.base + path, timeout=10)
            assert answer.status_code == 400, (path, answer.status_code, answer.text[:200])
            assert "NUL" in answer.text
        for endpoint, form in (
            ("/token", {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "a\x00b"}),
            ("/revoke", {"token": "x", "client_id": "a\x00b"}),
        ):
            answer = httpx.post(server.base + endpoint, data=form, timeout=10)
            assert answer.status_code == 400, (endpoint, answer.text[:200])
            assert answer.json()["error"] == "invalid_request"
        assert httpx.get(server.base + "/oauth/signin?request=unknown", timeout=10).status_code != 500


@pytest.mark.parametrize("client_id", ["https://[::1", "https://[::1]/x", "https://example.org:99999/x"])
def test_a_client_id_url_that_does_not_parse_is_an_unknown_client(
    server: AuthzServer, client_id: str
) -> None:
    """`https://[::1` raised ValueError from urlsplit at /authorize, /token and /revoke."""
    asked = httpx.get(
        server.base + "/authorize",
        params={"client_id": client_id, "response_type": "code", "redirect_uri": "http://127.0.0.1:9/cb"},
        timeout=10,
    )
    assert asked.status_code == 400, asked.text[:200]
    token = httpx.post(
        server.base + "/token",
        data={"grant_type": "refresh_token", "refresh_token": "x", "client_id": client_id},
    )
    assert token.status_code in (400, 401), token.text[:200]


def test_a_consent_answer_with_a_non_ascii_csrf_value_is_refused(server: AuthzServer) -> None:
    """hmac.compare_digest raised TypeError on `é`: a 500."""
    browser = "A" * 43
    answer = httpx.post(
        server.base + "/oauth/consent",
        content=b"request=x&decision=approve&csrf=%C3%A9",
        headers={**FORM, "cookie": f"nc_mcp_browser={browser}"},
        timeout=10,
    )
    assert 400 <= answer.status_code < 500, answer.status_code
    assert "Nothing was changed" in answer.text or "not accepted" in answer.text
