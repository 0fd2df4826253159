"""AUTH_SERVER_* settings: what a working configuration is, and one line per problem otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from nextcloud_mcp_server.config import ConfigError, load_settings

GOOD: dict[str, Any] = {
    "nextcloud_host": "https://cloud.example.com",
    "mcp_public_url": "https://mcp.example.com/mcp",
    "mcp_allowed_hosts": "mcp.example.com",
    "auth_server_enabled": "true",
    "token_encryption_key": "k" * 44,
    "nextcloud_consent_provider": "login-flow-v2",
}


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
    settings = load_settings(env_file=None, **{**GOOD, "nextcloud_consent_provider": "nextcloud-oauth2"})
    [problem] = settings.problems_for_oauth()
    assert problem.startswith("NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required")


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
        ('[{"client_id": "a", "redirect_uris": ["/cb"]}]', "AUTH_SERVER_CLIENTS has a redirect URI"),
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
