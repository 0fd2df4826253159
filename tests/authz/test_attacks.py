"""Attacks on this server as authorization server, over HTTP against the running app: redirect
URIs, PKCE, code replay, refresh token reuse and revocation, hostile client ID metadata documents,
a registration flood, and forged or misdirected access tokens at /mcp."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from nextcloud_mcp_server.authz import routes
from tests.authz.documents import DocumentHost, document_host
from tests.authz_server import AuthzServer, Pkce, authz_server
from tests.mcp_clients import INITIALIZE, MCP_HEADERS

REDIRECT = "http://127.0.0.1:9/cb"


@pytest.fixture
def documents(tmp_path: Path) -> Iterator[DocumentHost]:
    with document_host(tmp_path) as host:
        yield host


@pytest.fixture
def server(double_url: str, tmp_path: Path, documents: DocumentHost) -> Iterator[AuthzServer]:
    with authz_server(
        double_url,
        tmp_path / "store.sqlite3",
        auth_server_dcr_per_minute=8,
        auth_server_cimd_ca_bundle=documents.ca_bundle,
        auth_server_cimd_timeout_seconds=1.0,
        auth_server_cimd_max_bytes=4096,
    ) as running:
        yield running


def mcp_status(server: AuthzServer, token: str) -> int:
    with server.http() as http:
        answer = http.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        )
    return answer.status_code


def revoke(server: AuthzServer, token: str, client_id: str) -> int:
    # The SDK's RevocationRequest model requires a client_secret field (mcp 2.3.0): a public client
    # sends it empty.
    with server.http() as http:
        return http.post(
            "/revoke", data={"token": token, "client_id": client_id, "client_secret": ""}
        ).status_code


def refresh(server: AuthzServer, tokens: dict[str, Any], refresh_token: str | None = None) -> Any:
    return server.token(
        grant_type="refresh_token",
        refresh_token=refresh_token or tokens["refresh_token"],
        client_id=tokens["client_id"],
    )


# --- redirect URIs and PKCE


def test_a_redirect_uri_not_registered_is_refused_without_redirecting(server: AuthzServer) -> None:
    client = server.register(REDIRECT)
    answer = server.authorize(client["client_id"], "http://127.0.0.1:9/elsewhere", Pkce.new())
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "not registered" in answer.text


def test_a_redirect_uri_not_in_the_metadata_document_is_refused(
    server: AuthzServer, documents: DocumentHost
) -> None:
    client_id = documents.url("good.json")
    answer = server.authorize(client_id, "https://attacker.example/cb", Pkce.new())
    assert answer.status_code == 400
    assert "location" not in answer.headers
    ok = server.authorize(client_id, documents.redirect_uri, Pkce.new())
    assert ok.status_code == 302
    assert ok.headers["location"].startswith(f"{server.base}/oauth/signin?request=")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"code_challenge": None}, "code_challenge"),
        ({"code_challenge": ""}, "code_challenge"),
        ({"code_challenge": "short"}, "code_challenge"),
        ({"code_challenge_method": "plain"}, "code_challenge_method"),
    ],
)
def test_pkce_is_required_and_only_s256(server: AuthzServer, change: dict[str, str | None], why: str) -> None:
    client = server.register(REDIRECT)
    answer = server.authorize(client["client_id"], REDIRECT, Pkce.new(), **change)
    assert answer.status_code == 302
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["error"] == ["invalid_request"]
    assert why in query["error_description"][0]
    assert not answer.headers["location"].startswith(server.base)  # no sign-in was started


def test_a_wrong_verifier_fails_and_burns_the_code(server: AuthzServer) -> None:
    client = server.register(REDIRECT)
    pkce = Pkce.new()
    code = server.code_for(client["client_id"], REDIRECT, pkce)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client["client_id"],
    }
    wrong = server.token(**form, code_verifier=Pkce.new().verifier)
    missing = server.token(**form)
    right = server.token(**form, code_verifier=pkce.verifier)
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert missing.status_code == 400  # no verifier at all: not even looked up
    assert right.status_code == 400  # the code had its one attempt
    assert right.json()["error"] == "invalid_grant"


def test_a_replayed_code_fails_and_revokes_what_the_first_use_got(server: AuthzServer) -> None:
    client = server.register(REDIRECT)
    pkce = Pkce.new()
    code = server.code_for(client["client_id"], REDIRECT, pkce)
    form = {
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "client_id": client["client_id"], "code_verifier": pkce.verifier,
    }  # fmt: skip
    first = server.token(**form)
    assert first.status_code == 200
    tokens = {**first.json(), "client_id": client["client_id"]}
    assert mcp_status(server, tokens["access_token"]) == 200
    second = server.token(**form)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert refresh(server, tokens).status_code == 400
    assert mcp_status(server, tokens["access_token"]) == 401


# --- refresh tokens


def test_refresh_rotates_and_reuse_revokes_the_family(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    rotated = refresh(server, tokens)
    assert rotated.status_code == 200
    newer = rotated.json()
    assert newer["refresh_token"] != tokens["refresh_token"]
    assert mcp_status(server, newer["access_token"]) == 200
    reused = refresh(server, tokens)  # the old one again: a thief or the victim, both suspicious
    assert reused.status_code == 400
    assert refresh(server, tokens, newer["refresh_token"]).status_code == 400  # the family is gone
    assert mcp_status(server, newer["access_token"]) == 401
    assert mcp_status(server, tokens["access_token"]) == 401


def test_a_revoked_refresh_token_is_refused(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    assert revoke(server, tokens["refresh_token"], tokens["client_id"]) == 200
    assert refresh(server, tokens).status_code == 400
    assert mcp_status(server, tokens["access_token"]) == 401


def test_a_revoked_access_token_is_refused_at_mcp(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    assert mcp_status(server, tokens["access_token"]) == 200
    assert revoke(server, tokens["access_token"], tokens["client_id"]) == 200
    assert mcp_status(server, tokens["access_token"]) == 401


def test_another_clients_refresh_token_is_refused(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    other = server.register(REDIRECT)
    stolen = server.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=other["client_id"]
    )
    assert stolen.status_code == 400


# --- client ID metadata documents


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("big.json", "larger than 4096 bytes"),
        ("silent.json", "no complete answer within 1 s"),
        ("other-id.json", "client_id is not its own URL"),
        ("redirect.json", "redirects are not followed"),
        ("not-json.json", "not JSON"),
        ("secret.json", "public client"),
        ("missing.json", "HTTP 404"),
    ],
)
def test_a_hostile_metadata_document_is_refused(
    server: AuthzServer, documents: DocumentHost, name: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nextcloud_mcp_server.authz")
    answer = server.authorize(documents.url(name), documents.redirect_uri, Pkce.new())
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert reason in caplog.text
    assert documents.fetched == [name]
    if name == "redirect.json":
        assert "good.json" not in documents.fetched


@pytest.mark.parametrize(
    "client_id",
    [
        "https://127.0.0.1:1/client.json",
        "https://10.1.2.3/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/client.json",
        "https://localhost/client.json",
        "https://[::ffff:127.0.0.1]/client.json",
    ],
)
def test_a_metadata_document_at_a_private_address_is_not_fetched(
    double_url: str, tmp_path: Path, client_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nextcloud_mcp_server.authz")
    with authz_server(double_url, tmp_path / "s.sqlite3", auth_server_cimd_allow_private=False) as server:
        answer = server.authorize(client_id, "http://127.0.0.1:9/cb", Pkce.new())
    assert answer.status_code == 400
    assert "non-public address" in caplog.text


def test_a_metadata_document_must_be_https(server: AuthzServer) -> None:
    answer = server.authorize("http://example.com/client.json", REDIRECT, Pkce.new())
    assert answer.status_code == 400


# --- registration


def test_a_registration_flood_gets_429_with_retry_after(server: AuthzServer) -> None:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    with server.http() as http:
        answers = [http.post("/register", json=body) for _ in range(10)]
    assert [a.status_code for a in answers] == [201] * 8 + [429] * 2
    assert 1 <= int(answers[-1].headers["retry-after"]) <= 60


def test_an_authorize_flood_gets_429(
    double_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routes, "AUTHORIZE_PER_MINUTE", 3)
    with authz_server(double_url, tmp_path / "s.sqlite3") as server:
        client = server.register(REDIRECT)
        answers = [server.authorize(client["client_id"], REDIRECT, Pkce.new()) for _ in range(4)]
    assert [a.status_code for a in answers] == [302, 302, 302, 429]
    assert "retry-after" in answers[-1].headers


def test_registrations_and_states_are_bounded(server: AuthzServer) -> None:
    with server.http() as http:
        many = http.post("/register", json={"redirect_uris": [f"https://a.example/{i}" for i in range(21)]})
        huge = http.post("/register", json={"redirect_uris": [REDIRECT], "client_name": "x" * 20_000})
    assert many.status_code == 400
    assert many.json()["error"] == "invalid_redirect_uri"
    assert huge.status_code == 400
    assert huge.json()["error"] == "invalid_client_metadata"
    client = server.register(REDIRECT)
    answer = server.authorize(client["client_id"], REDIRECT, Pkce.new(), state="s" * 1025)
    assert parse_qs(urlsplit(answer.headers["location"]).query)["error"] == ["invalid_request"]


# --- access tokens at /mcp


def forged(server: AuthzServer, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    return {
        "iss": server.settings.auth_server_issuer, "sub": "alice", "aud": server.mcp, "client_id": "c",
        "scope": "notes:read", "iat": now, "exp": now + 300, "jti": f"j{now}", "fam": "f", **changes,
    }  # fmt: skip


def test_a_token_for_another_resource_is_refused_at_mcp(server: AuthzServer) -> None:
    assert server.runtime.auth_server is not None
    keys = server.runtime.auth_server.keys
    assert mcp_status(server, keys.sign(forged(server))) == 200  # the control: our own key, our audience
    assert mcp_status(server, keys.sign(forged(server, aud="https://other.example/mcp"))) == 401


def test_an_expired_token_is_refused_at_mcp(server: AuthzServer) -> None:
    assert server.runtime.auth_server is not None
    old = int(time.time()) - 3600
    token = server.runtime.auth_server.keys.sign(forged(server, iat=old, exp=old + 600))
    assert mcp_status(server, token) == 401


def test_a_token_signed_by_an_unknown_key_is_refused_at_mcp(server: AuthzServer) -> None:
    assert server.runtime.auth_server is not None
    kid = server.runtime.auth_server.keys.jwks()["keys"][0]["kid"]
    stranger = ec.generate_private_key(ec.SECP256R1())
    for headers in ({"kid": kid}, {"kid": "unknown"}):
        token = jwt.encode(forged(server), stranger, algorithm="ES256", headers=headers)
        assert mcp_status(server, token) == 401


def test_the_jwks_and_metadata_are_published(server: AuthzServer) -> None:
    with server.http() as http:
        metadata = http.get("/.well-known/oauth-authorization-server").json()
        jwks = http.get("/.well-known/jwks.json").json()
        resource = http.get("/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["issuer"] == server.settings.auth_server_issuer
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["jwks_uri"] == f"{server.base}/.well-known/jwks.json"
    assert [k["kty"] for k in jwks["keys"]] == ["EC"]
    assert "d" not in jwks["keys"][0]  # the public half only
    assert resource["authorization_servers"] == [server.settings.auth_server_issuer]


def test_browser_clients_may_call_the_token_endpoint_but_not_mcp_from_another_origin(
    server: AuthzServer,
) -> None:
    origin = {"Origin": "https://inspector.example"}
    with server.http() as http:
        token = http.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": "x"}, headers=origin
        )
        mcp = http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **origin})
    assert token.status_code in (400, 401)  # answered by the token endpoint, not the guard
    assert token.headers["access-control-allow-origin"] == "*"
    assert mcp.status_code == 403


def test_an_opaque_token_is_refused_at_mcp(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    assert mcp_status(server, tokens["refresh_token"]) == 401  # a refresh token is no access token


def test_tokens_signed_before_a_key_rotation_still_work(server: AuthzServer) -> None:
    tokens = server.tokens_for()
    assert server.runtime.auth_server is not None
    keys = server.runtime.auth_server.keys
    server.run(keys.rotate())
    with server.http() as http:
        published = http.get("/.well-known/jwks.json").json()["keys"]
    assert len(published) == 2
    assert mcp_status(server, tokens["access_token"]) == 200
    fresh = refresh(server, tokens).json()
    assert jwt.get_unverified_header(fresh["access_token"])["kid"] == published[-1]["kid"]
    assert mcp_status(server, fresh["access_token"]) == 200


def test_a_configured_confidential_client_must_present_its_secret(double_url: str, tmp_path: Path) -> None:
    secret = "s" * 32
    clients = f'[{{"client_id": "my-app", "redirect_uris": ["{REDIRECT}"], "client_secret": "{secret}"}}]'
    with authz_server(double_url, tmp_path / "s.sqlite3", auth_server_clients=clients) as server:
        pkce = Pkce.new()
        code = server.code_for("my-app", REDIRECT, pkce)
        form = {
            "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "my-app",
            "code_verifier": pkce.verifier,
        }  # fmt: skip
        wrong = server.token(**form, client_secret="x" * 32)
        right = server.token(**form, client_secret=secret)
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    assert right.status_code == 200
    assert (
        jwt.decode(right.json()["access_token"], options={"verify_signature": False})["client_id"] == "my-app"
    )


def test_dot_style_scopes_work_end_to_end(double_url: str, tmp_path: Path) -> None:
    with authz_server(double_url, tmp_path / "s.sqlite3", oauth_scope_style="dot") as server:
        client = server.register(REDIRECT, scope="notes.read")
        answer = server.authorize(client["client_id"], REDIRECT, Pkce.new(), scope="notes.read")
        assert answer.status_code == 302
        request_id = parse_qs(urlsplit(answer.headers["location"]).query)["request"][0]
        found = server.run(server.runtime.authorization_requests.get(request_id))
    assert found is not None
    assert found.scopes == ("notes.read",)
