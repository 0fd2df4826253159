"""AUTH_SERVER_* settings: what a working configuration is, and one line per problem otherwise."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from nextcloud_mcp_server.config import ConfigError, load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.storage.crypto import generate_key
from tests.test_cli import cli

GOOD: dict[str, Any] = {
    "nextcloud_host": "https://cloud.example.com",
    "mcp_public_url": "https://mcp.example.com/mcp",
    "mcp_allowed_hosts": "mcp.example.com",
    "auth_server_enabled": "true",
    "token_encryption_key": "k" * 44,
    "nextcloud_consent_provider": "nextcloud-oauth2",
    "nextcloud_oauth2_client_id": "mcp-server-at-nextcloud",
    "nextcloud_oauth2_client_secret": "s" * 32,
}
LOGIN_FLOW = {**GOOD, "nextcloud_consent_provider": "login-flow-v2"}
del LOGIN_FLOW["nextcloud_oauth2_client_id"], LOGIN_FLOW["nextcloud_oauth2_client_secret"]


def test_a_working_configuration_is_oauth_with_offline_access_and_its_own_issuer() -> None:
    settings = load_settings(env_file=None, **GOOD)
    assert settings.problems_for_oauth() == []
    assert settings.oauth_enabled
    assert settings.enable_offline_access
    assert settings.token_issuer == "https://mcp.example.com/"
    assert settings.auth_server_access_token_seconds == 600


def test_every_conflict_is_one_line() -> None:
    settings = load_settings(
        env_file=None,
        **{
            **GOOD,
            "oidc_issuer": "https://id.example.com",
            "nextcloud_consent_provider": "oidc",
            "token_encryption_key": "",
            "mcp_public_url": "http://mcp.example.com/mcp",
        },
    )
    problems = settings.problems_for_oauth()
    assert [p.split(" ", 1)[0] for p in problems] == [
        "OIDC_ISSUER",
        "NEXTCLOUD_CONSENT_PROVIDER",
        "TOKEN_ENCRYPTION_KEY",
        "MCP_PUBLIC_URL",
    ]
    assert all("\n" not in p for p in problems)


def test_nextcloud_oauth2_still_needs_its_client() -> None:
    without_client = {**LOGIN_FLOW, "nextcloud_consent_provider": "nextcloud-oauth2"}
    settings = load_settings(env_file=None, **without_client)
    [problem] = settings.problems_for_oauth()
    assert problem.startswith("NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required")


def test_a_login_flow_sign_in_is_refused_and_the_line_says_why_and_what_to_do() -> None:
    """Issue 31 #1: a Login Flow link works in any browser, so whoever forwards it gets tokens for
    the account that signs in. Without an OAuth2 client there is no safe sign-in: refused."""
    settings = load_settings(env_file=None, **LOGIN_FLOW)
    [problem] = settings.problems_for_oauth()
    assert problem.startswith(
        "NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required with "
        "AUTH_SERVER_ENABLED=true: people sign in through Nextcloud's OAuth2 app"
    )
    assert "redirection URI https://mcp.example.com/oauth/callback-nextcloud" in problem
    assert "docs/ADR/0033" in problem
    assert "AUTH_SERVER_LOGIN_FLOW_SIGNIN=true accepts that risk" in problem
    assert settings.signin_provider == "nextcloud-oauth2"


def test_with_an_oauth2_client_people_sign_in_through_it_and_login_flow_serves_later_consents() -> None:
    settings = load_settings(
        env_file=None,
        **{**GOOD, "nextcloud_consent_provider": "login-flow-v2"},
    )
    assert settings.problems_for_oauth() == []
    assert settings.signin_provider == "nextcloud-oauth2"


def test_only_the_explicit_setting_brings_back_a_login_flow_sign_in() -> None:
    settings = load_settings(env_file=None, **{**LOGIN_FLOW, "auth_server_login_flow_signin": "true"})
    assert settings.problems_for_oauth() == []
    assert settings.signin_provider == "login-flow-v2"


def test_the_login_flow_setting_without_the_login_flow_provider_is_a_mistake_named() -> None:
    settings = load_settings(env_file=None, **{**GOOD, "auth_server_login_flow_signin": "true"})
    [problem] = settings.problems_for_oauth()
    assert problem.startswith(
        "AUTH_SERVER_LOGIN_FLOW_SIGNIN=true needs NEXTCLOUD_CONSENT_PROVIDER=login-flow-v2"
    )


def test_the_server_does_not_start_with_a_login_flow_sign_in(tmp_path: Path) -> None:
    """`run`, as a self-hoster starts it: exit 2 and the one line, before anything listens."""
    env = {
        "NEXTCLOUD_HOST": "https://cloud.example.com",
        "MCP_PUBLIC_URL": "http://127.0.0.1:8000/mcp",
        "AUTH_SERVER_ENABLED": "true",
        "NEXTCLOUD_CONSENT_PROVIDER": "login-flow-v2",
        "TOKEN_ENCRYPTION_KEY": generate_key(),
        "STORE_PATH": str(tmp_path / "store.sqlite3"),
    }
    result = cli("run", "--transport", "http", env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("nextcloud-mcp-bridge: NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT")
    assert "AUTH_SERVER_LOGIN_FLOW_SIGNIN" in line
    assert not (tmp_path / "store.sqlite3").exists()  # nothing was created


def test_a_login_flow_sign_in_warns_at_every_start(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = load_settings(
        env_file=None,
        **{
            **LOGIN_FLOW,
            "auth_server_login_flow_signin": "true",
            "token_encryption_key": generate_key(),
            "store_path": tmp_path / "s.sqlite3",
        },
    )
    with caplog.at_level(logging.WARNING, logger="nextcloud_mcp_server.runtime"):
        Runtime(settings)
    [record] = caplog.records
    assert record.getMessage().startswith("AUTH_SERVER_LOGIN_FLOW_SIGNIN=true: people sign in through Login")
    assert "docs/ADR/0033" in record.getMessage()


def test_loopback_http_is_a_valid_issuer_for_tests() -> None:
    settings = load_settings(env_file=None, **{**GOOD, "mcp_public_url": "http://127.0.0.1:8000/mcp"})
    assert settings.problems_for_oauth() == []
    assert settings.token_issuer == "http://127.0.0.1:8000/"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[", "AUTH_SERVER_CLIENTS must be a JSON list of clients"),
        ('{"client_id": "a"}', "AUTH_SERVER_CLIENTS must be a JSON list of at most 100 clients"),
        ('[{"redirect_uris": ["https://a/cb"]}]', 'AUTH_SERVER_CLIENTS needs a "client_id" text'),
        ('[{"client_id": "a", "redirect_uris": []}]', 'AUTH_SERVER_CLIENTS needs "redirect_uris"'),
        (
            '[{"client_id": "a", "redirect_uris": ["/cb"]}]',
            "AUTH_SERVER_CLIENTS client a: a redirect URI must be an absolute URI",
        ),
        (
            '[{"client_id": "a", "redirect_uris": ["https://a/cb"], "client_secret": "short"}]',
            "AUTH_SERVER_CLIENTS client a: client_secret must be",
        ),
    ],
)
def test_bad_configured_clients_are_named(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, **{**GOOD, "auth_server_clients": value})
    [problem] = caught.value.problems
    assert problem.startswith(message)


def test_lifetimes_are_bounded() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, **{**GOOD, "auth_server_access_token_seconds": "86400"})
    assert caught.value.problems == ["AUTH_SERVER_ACCESS_TOKEN_SECONDS must be at most 3600"]
