"""One redirect URI policy wherever a redirect URI enters (issue 31, findings 3 and 9; ADR 0034):
dynamic registration, AUTH_SERVER_CLIENTS, client ID metadata documents and /authorize - a client
stored before the policy included - and a client name that cannot reorder the consent page."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp.shared.auth import OAuthClientInformationFull

from nextcloud_mcp_server.authz.pages import consent_page
from nextcloud_mcp_server.config import ConfigError, load_settings
from nextcloud_mcp_server.inbound.client_policy import name_problem, redirect_uri_problem
from tests.authz.documents import DocumentHost, document_host
from tests.authz_server import AuthzServer, Pkce, authz_server

ALLOWED = [
    "https://claude.ai/api/mcp/auth_callback",
    "https://app.example/cb?kept=1",
    "http://127.0.0.1:3118/callback",
    "http://127.1.2.3/cb",
    "http://localhost:6274/oauth/callback",
    "http://[::1]:8080/cb",
    "com.example.app:/oauth2redirect",
    "com.example.app://callback",
    "cursor://anysphere.cursor-retrieval/oauth/user-nextcloud/callback",
    "vscode://vscode.github-authentication/did-authenticate",
    "claude://claude.ai/mcp-callback",
]
REFUSED = [
    ("javascript:alert(document.cookie)", "javascript: scheme"),
    ("JavaScript:alert(1)", "javascript: scheme"),
    ("data:text/html,<script>alert(1)</script>", "data: scheme"),
    ("vbscript:msgbox(1)", "vbscript: scheme"),
    ("file:///etc/passwd", "file: scheme"),
    ("blob:https://app.example/1234", "blob: scheme"),
    ("about:blank", "about: scheme"),
    ("web+mcp:callback", "web+mcp: scheme"),
    ("http://app.example/cb", "loopback"),
    ("http://10.0.0.5/cb", "loopback"),
    ("https://app.example/cb#frag", "fragment"),
    ("https://app.example/cb#", "fragment"),
    ("http://127.0.0.1:9/cb#x", "fragment"),
    ("com.example.app:/cb#x", "fragment"),
    ("https://user:pw@app.example/cb", "user info"),
    ("https://app.example@evil.example/cb", "user info"),
    ("https:///cb", "needs a host"),
    ("/relative/cb", "absolute URI"),
    ("java\tscript:alert(1)", "U+0009"),
    (" javascript:alert(1)", "U+0020"),
    ("https://app.example/\u202ebc", "U+202E"),
    ("https://app.example/" + "a" * 2000, "at most 2000"),
]


@pytest.mark.parametrize("uri", ALLOWED)
def test_https_loopback_http_and_app_schemes_are_allowed(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(("uri", "why"), REFUSED)
def test_schemes_browsers_act_on_fragments_user_info_and_remote_http_are_refused(uri: str, why: str) -> None:
    problem = redirect_uri_problem(uri)
    assert problem is not None
    assert why in problem


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Notes \u202ereppleh", "U+202E"),
        ("a\u2066b", "U+2066"),
        ("a\u200fb", "U+200F"),
        ("a\u061cb", "U+061C"),
        ("line\nbreak", "U+000A"),
        ("x" * 201, "at most 200"),
    ],
)
def test_a_client_name_that_reorders_or_hides_text_is_refused(name: str, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None
    assert why in problem
    assert (
        name_problem("Notes helper \u05e2\u05d1\u05e8\u05d9\u05ea") is None
    )  # right-to-left text itself is fine


@pytest.fixture
def documents(tmp_path: Path) -> Iterator[DocumentHost]:
    with document_host(tmp_path) as host:
        yield host


@pytest.fixture
def server(double_url: str, tmp_path: Path, documents: DocumentHost) -> Iterator[AuthzServer]:
    with authz_server(
        double_url,
        tmp_path / "store.sqlite3",
        auth_server_dcr_per_minute=100,
        auth_server_cimd_ca_bundle=documents.ca_bundle,
    ) as running:
        yield running


def test_registration_refuses_dangerous_redirect_uris_and_accepts_real_clients_ones(
    server: AuthzServer,
) -> None:
    with server.http() as http:
        refused = {
            uri: http.post("/register", json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"})
            for uri, _ in REFUSED[:12]
        }
        mixed = http.post("/register", json={"redirect_uris": [ALLOWED[0], "javascript:alert(1)"]})
    for uri, answer in refused.items():
        assert answer.status_code == 400, (uri, answer.text)
        assert answer.json()["error"] == "invalid_redirect_uri", uri
    assert mixed.status_code == 400
    assert "javascript: scheme" in mixed.json()["error_description"]
    for uri in ALLOWED:
        assert server.register(uri)["redirect_uris"] == [uri]


def test_registration_refuses_a_name_that_reverses_the_consent_text(server: AuthzServer) -> None:
    with server.http() as http:
        answer = http.post(
            "/register", json={"redirect_uris": [ALLOWED[2]], "client_name": "Notes \u202ereppleh"}
        )
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_client_metadata"
    assert "U+202E" in answer.json()["error_description"]


def test_a_client_stored_before_the_policy_is_refused_at_authorize_without_a_redirect(
    server: AuthzServer,
) -> None:
    """A registration from before the policy (written straight to the store) cannot send anyone
    to javascript:, neither with a code nor with an error."""
    assert server.runtime.auth_server is not None
    clients = server.runtime.auth_server.provider.clients
    old = OAuthClientInformationFull.model_validate(
        {"client_id": "old-client", "redirect_uris": ["javascript:alert(document.cookie)"],
         "token_endpoint_auth_method": "none", "scope": "notes:read"}
    )  # fmt: skip
    server.run(clients.register(old))
    explicit = server.authorize("old-client", "javascript:alert(document.cookie)", Pkce.new())
    implicit = server.authorize("old-client", None, Pkce.new())  # type: ignore[arg-type]
    bad_scope = server.authorize("old-client", None, Pkce.new(), scope="nothing:known")  # type: ignore[arg-type]
    for answer in (explicit, implicit, bad_scope):
        assert answer.status_code == 400, answer.text
        assert "location" not in answer.headers
        assert "javascript: scheme" in answer.text


def test_a_metadata_document_with_a_javascript_redirect_or_a_reversing_name_is_refused(
    server: AuthzServer, documents: DocumentHost, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nextcloud_mcp_server.authz")
    scripted = server.authorize(
        documents.url("javascript.json"), "javascript:alert(document.cookie)", Pkce.new()
    )
    reversed_name = server.authorize(documents.url("bidi-name.json"), documents.redirect_uri, Pkce.new())
    assert scripted.status_code == reversed_name.status_code == 400
    assert "location" not in scripted.headers
    assert "javascript: scheme" in caplog.text
    assert "U+202E" in caplog.text


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("javascript:alert(1)", "javascript: scheme"),
        ("https://app.example/cb#x", "fragment"),
        ("http://app.example/cb", "loopback"),
    ],
)
def test_a_configured_client_with_a_bad_redirect_uri_stops_the_start(uri: str, why: str) -> None:
    clients = f'[{{"client_id": "my-app", "redirect_uris": ["{uri}"]}}]'
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, auth_server_clients=clients)
    [problem] = caught.value.problems
    assert problem.startswith("AUTH_SERVER_CLIENTS client my-app:")
    assert why in problem


def test_the_consent_page_isolates_and_cleans_what_a_client_chose() -> None:
    """A name stored before the policy, with a right-to-left override, cannot reverse the rest of
    the page: the override is dropped and every outside text sits in its own <bdi>."""
    page = consent_page(
        action="/oauth/consent",
        request_id="r",
        csrf="c",
        client_name="Notes \u202ereppleh \u05e2\u05d1",
        client_id="client-\u2067x",
        redirect_uri="https://app.example/cb",
        scopes=("notes:read",),
        account="alice\u200f",
    )
    body = bytes(page.body).decode()
    for hidden in ("\u202e", "\u2067", "\u200f"):
        assert hidden not in body
    assert "<bdi>Notes reppleh \u05e2\u05d1</bdi>" in body
    assert "<bdi>alice</bdi>" in body
    assert "<bdi>client-x</bdi>" in body
    assert "<title>Allow Notes reppleh \u05e2\u05d1?</title>" in body


def test_error_redirects_never_go_to_an_unregistered_uri(server: AuthzServer) -> None:
    """The control for the stored-client case: a registered https client gets its error redirect."""
    client = server.register(ALLOWED[1])
    answer = server.authorize(client["client_id"], ALLOWED[1], Pkce.new(), scope="nothing:known")
    assert answer.status_code == 302
    assert answer.headers["location"].startswith("https://app.example/cb?kept=1&error=invalid_scope")
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["iss"] == [server.settings.auth_server_issuer]
