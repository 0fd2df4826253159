"""What the SDK's endpoints leave to us (issue 31, findings 4, 5 and 9): `iss` on every redirect
back to the client, `resource` naming another server at /token, revocation by a public client,
the scope in the 401, bounded and capped registrations, and the 429's words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from nextcloud_mcp_server.authz import routes
from tests.authz_server import AuthzServer, Pkce, authz_server
from tests.mcp_clients import INITIALIZE, MCP_HEADERS

REDIRECT = "http://127.0.0.1:9/cb"
OTHER = "https://other.example/mcp"


@pytest.fixture
def server(double_url: str, tmp_path: Path) -> Iterator[AuthzServer]:
    with authz_server(double_url, tmp_path / "store.sqlite3", auth_server_dcr_per_minute=100) as running:
        yield running


def answer_of(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["location"]).query)


# --- finding 4: iss on every redirect back to the client


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"resource": OTHER}, "invalid_target"),
        ({"scope": "nothing:known"}, "invalid_scope"),
        ({"code_challenge": "short"}, "invalid_request"),  # refused by our provider
        ({"code_challenge": None}, "invalid_request"),  # refused by the SDK's own validation
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ],
)
def test_every_error_redirect_from_authorize_names_the_issuer(
    server: AuthzServer, change: dict[str, str | None], error: str
) -> None:
    client = server.register(REDIRECT)
    query = answer_of(server.authorize(client["client_id"], REDIRECT, Pkce.new(), **change))
    assert query["error"] == [error]
    assert query["iss"] == [server.settings.auth_server_issuer]
    assert query["state"][0].startswith("st-")


def test_the_redirect_to_our_own_sign_in_carries_no_iss_and_the_code_does(server: AuthzServer) -> None:
    client = server.register(REDIRECT)
    signin = server.authorize(client["client_id"], REDIRECT, Pkce.new())
    assert signin.headers["location"].startswith(f"{server.base}/oauth/signin?request=")
    assert "iss" not in answer_of(signin)
    landed = parse_qs(urlsplit(server.approve(signin.headers["location"], "alice")).query)
    assert landed["iss"] == [server.settings.auth_server_issuer]


# --- finding 9: resource at /token, revocation without client_secret, scope in the 401


def exchange(server: AuthzServer, **extra: str) -> Any:
    client = server.register(REDIRECT)
    pkce = Pkce.new()
    code = server.code_for(client["client_id"], REDIRECT, pkce)
    return server.token(
        grant_type="authorization_code", code=code, redirect_uri=REDIRECT, client_id=client["client_id"],
        code_verifier=pkce.verifier, **extra,
    )  # fmt: skip


def test_a_code_exchange_for_another_resource_is_invalid_target(server: AuthzServer) -> None:
    foreign = exchange(server, resource=OTHER)
    ours = exchange(server, resource=server.mcp)
    blank = exchange(server, resource="")  # as if absent: the code's own resource
    assert blank.status_code == 200, blank.text
    assert foreign.status_code == 400
    assert foreign.json()["error"] == "invalid_target"
    assert "access_token" not in foreign.json()
    assert ours.status_code == 200
    assert jwt.decode(ours.json()["access_token"], options={"verify_signature": False})["aud"] == server.mcp


def test_a_refresh_for_another_resource_is_invalid_target_and_spends_nothing(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": tokens["client_id"],
    }
    foreign = server.token(**form, resource=OTHER)
    assert foreign.status_code == 400
    assert foreign.json()["error"] == "invalid_target"
    assert server.token(**form).status_code == 200  # the refresh token was not used up


def test_a_public_client_revokes_without_a_client_secret_field(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    with server.http() as http:
        revoked = http.post(
            "/revoke", data={"token": tokens["refresh_token"], "client_id": tokens["client_id"]}
        )
    assert revoked.status_code == 200, revoked.text
    refresh = server.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=tokens["client_id"]
    )
    assert refresh.status_code == 400


def test_a_confidential_client_still_needs_its_secret_to_revoke(double_url: str, tmp_path: Path) -> None:
    secret = "s" * 32
    clients = f'[{{"client_id": "my-app", "redirect_uris": ["{REDIRECT}"], "client_secret": "{secret}"}}]'
    with (
        authz_server(double_url, tmp_path / "s.sqlite3", auth_server_clients=clients) as server,
        server.http() as http,
    ):
        without = http.post("/revoke", data={"token": "x", "client_id": "my-app"})
        wrong = http.post("/revoke", data={"token": "x", "client_id": "my-app", "client_secret": "y" * 32})
        right = http.post("/revoke", data={"token": "x", "client_id": "my-app", "client_secret": secret})
    assert without.status_code == wrong.status_code == 401
    assert right.status_code == 200


def test_the_401_names_the_scopes_to_ask_for(server: AuthzServer) -> None:
    with server.http() as http:
        answer = http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert answer.status_code == 401
    header = answer.headers["www-authenticate"]
    scope = header.split('scope="', 1)[1].split('"', 1)[0].split()
    assert "notes:read" in scope
    assert "files:write" in scope
    assert 'resource_metadata="' in header


def test_token_and_revoke_take_only_bounded_urlencoded_forms(server: AuthzServer) -> None:
    with server.http() as http:
        huge = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": "x" * 20_000})
        json_body = http.post("/token", json={"grant_type": "refresh_token", "refresh_token": "x"})
        huge_revoke = http.post("/revoke", data={"token": "x" * 20_000, "client_id": "c"})
    assert huge.status_code == huge_revoke.status_code == 413
    assert json_body.status_code == 400
    assert "x-www-form-urlencoded" in json_body.json()["error_description"]


# --- finding 5: registrations bounded in size and in number; the 429's words


def test_a_registration_over_8_kib_is_refused(server: AuthzServer) -> None:
    uris = [f"https://app.example/{i:04d}/" + "p" * 580 for i in range(20)]  # about 12 KiB
    with server.http() as http:
        big = http.post("/register", json={"redirect_uris": uris, "token_endpoint_auth_method": "none"})
        chunked = http.post(
            "/register",
            content=iter(
                [b'{"redirect_uris": ["' + REDIRECT.encode() + b'"], "client_name": "', b"x" * 9000, b'"}']
            ),
            headers={"Content-Type": "application/json"},
        )
    assert big.status_code == chunked.status_code == 400
    assert big.json()["error"] == "invalid_client_metadata"
    assert "8192 bytes" in big.json()["error_description"]


def test_unused_registrations_are_capped_and_a_used_one_frees_its_place(
    double_url: str, tmp_path: Path
) -> None:
    with authz_server(
        double_url, tmp_path / "s.sqlite3", auth_server_dcr_per_minute=100, auth_server_dcr_max_unused=10
    ) as server:
        for _ in range(9):
            server.register(REDIRECT)
        server.tokens_for()  # the tenth registration, used: it no longer counts
        server.register(REDIRECT)
        with server.http() as http:
            refused = http.post(
                "/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
            )
        stored = server.run(_count(server))
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert "AUTH_SERVER_DCR_MAX_UNUSED" in refused.json()["error_description"]
    seven_days = 7 * 86400
    assert seven_days - 120 <= int(refused.headers["retry-after"]) <= seven_days
    assert stored == 11  # nothing was stored for the refused one


async def _count(server: AuthzServer) -> int:
    async with server.runtime.store.db.execute("SELECT COUNT(*) FROM authz_clients") as cursor:  # type: ignore[union-attr]
        row = await cursor.fetchone()
    return int(row[0])


def test_the_authorize_429_speaks_of_authorization_requests(
    double_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routes, "AUTHORIZE_PER_MINUTE", 1)
    with authz_server(double_url, tmp_path / "s.sqlite3") as server:
        client = server.register(REDIRECT)
        server.authorize(client["client_id"], REDIRECT, Pkce.new())
        refused = server.authorize(client["client_id"], REDIRECT, Pkce.new())
    assert refused.status_code == 429
    described = refused.json()["error_description"]
    assert "authorization requests" in described
    assert "registration" not in described
