"""Settings: parsing, normalisation, one-line problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from nextcloud_mcp_server.config import ConfigError, load_settings


def test_defaults_and_normalisation() -> None:
    """A trailing slash is dropped from the host; defaults are sensible."""
    settings = load_settings(
        env_file=None, nextcloud_host="https://cloud.example.com/nextcloud/", nextcloud_username=" alice "
    )
    assert settings.nextcloud_host == "https://cloud.example.com/nextcloud"
    assert settings.nextcloud_hostname == "cloud.example.com"
    assert settings.nextcloud_username == "alice"
    assert settings.nextcloud_timeout_seconds == 30
    assert settings.notes_max_content_bytes == 1024 * 1024
    assert settings.mcp_host == "127.0.0.1"


def test_several_problems_are_all_reported() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, nextcloud_host="cloud.example.com", mcp_port="-1")
    assert caught.value.problems == [
        "NEXTCLOUD_HOST must be an http(s) URL, e.g. https://cloud.example.com",
        "MCP_PORT must be at least 0",
    ]


def test_missing_credentials_are_named() -> None:
    settings = load_settings(env_file=None, nextcloud_host="https://x.example")
    assert [p.split(" ")[0] for p in settings.problems_for_nextcloud()] == [
        "NEXTCLOUD_USERNAME",
        "NEXTCLOUD_PASSWORD",
    ]


def test_password_is_a_secret_that_does_not_print() -> None:
    settings = load_settings(env_file=None, nextcloud_password="very-secret-value")
    assert "very-secret-value" not in repr(settings)
    assert settings.secrets() == ["very-secret-value"]


def test_environment_and_dotenv_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The environment wins over .env; both are read."""
    (tmp_path / ".env").write_text("NEXTCLOUD_HOST=https://from-dotenv.example\nNEXTCLOUD_USERNAME=bob\n")
    monkeypatch.setenv("NEXTCLOUD_USERNAME", "carol")
    settings = load_settings(env_file=tmp_path / ".env")
    assert settings.nextcloud_host == "https://from-dotenv.example"
    assert settings.nextcloud_username == "carol"


def test_allowed_hosts_are_split_and_checked() -> None:
    settings = load_settings(env_file=None, mcp_allowed_hosts="MCP.example.com, other.example:8443")
    assert settings.allowed_hosts == ["mcp.example.com", "other.example:8443"]
    with pytest.raises(ConfigError, match="MCP_ALLOWED_HOSTS must be a comma-separated list"):
        load_settings(env_file=None, mcp_allowed_hosts="https://mcp.example.com/")


@pytest.mark.parametrize(
    ("provider", "extra", "needed"),
    [
        ("oidc", {}, "OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required"),
        (
            "nextcloud-oauth2",
            {},
            "NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required",
        ),
        ("login-flow-v2", {}, None),
        (
            "nextcloud-oauth2",
            {"nextcloud_oauth2_client_id": "c", "nextcloud_oauth2_client_secret": "s"},
            None,
        ),
    ],
)
def test_each_consent_provider_asks_only_for_its_own_client(
    provider: str, extra: dict[str, str], needed: str | None
) -> None:
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        oidc_issuer="https://id.example.com",
        mcp_public_url="https://mcp.example.com/mcp",
        mcp_allowed_hosts="mcp.example.com",
        enable_offline_access="true",
        token_encryption_key="k" * 44,
        nextcloud_consent_provider=provider,
        **extra,
    )
    problems = settings.problems_for_oauth()
    if needed is None:
        assert problems == []
    else:
        [problem] = problems
        assert problem.startswith(needed)
    if provider == "nextcloud-oauth2" and needed:
        assert "redirection URI https://mcp.example.com/oauth/callback-nextcloud" in problems[0]


def test_an_unknown_consent_provider_and_a_bad_public_url_are_named() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            env_file=None, nextcloud_consent_provider="saml", nextcloud_public_url="cloud.example.com"
        )
    assert caught.value.problems == [
        "NEXTCLOUD_CONSENT_PROVIDER must be one of 'oidc', 'nextcloud-oauth2' or 'login-flow-v2'",
        "NEXTCLOUD_PUBLIC_URL must be an http(s) URL",
    ]


def test_the_password_can_come_from_a_file(tmp_path: Path) -> None:
    """Docker secrets: the first line of NEXTCLOUD_PASSWORD_FILE, trimmed, is the app password."""
    secret = tmp_path / "app-password"
    secret.write_text("Abcde-Fghij-Klmno-Pqrst-Uvwxy\n")
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://x.example",
        nextcloud_username="alice",
        nextcloud_password_file=secret,
    )
    assert settings.nextcloud_password is not None
    assert settings.nextcloud_password.get_secret_value() == "Abcde-Fghij-Klmno-Pqrst-Uvwxy"
    assert settings.problems_for_nextcloud() == []
    assert "Abcde-Fghij-Klmno-Pqrst-Uvwxy" in settings.secrets()  # redacted from logs like the variable


@pytest.mark.parametrize(
    ("content", "password", "problem"),
    [
        ("", None, "NEXTCLOUD_PASSWORD_FILE {file} is empty"),
        ("pw\n", "pw", "NEXTCLOUD_PASSWORD and NEXTCLOUD_PASSWORD_FILE are both set; keep one"),
        (None, None, "NEXTCLOUD_PASSWORD_FILE must be the path of a readable file holding the app password"),
    ],
    ids=["empty", "both", "missing"],
)
def test_a_bad_password_file_is_named(
    tmp_path: Path, content: str | None, password: str | None, problem: str
) -> None:
    secret = tmp_path / "app-password"
    if content is not None:
        secret.write_text(content)
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, nextcloud_password_file=secret, nextcloud_password=password)
    assert caught.value.problems == [problem.format(file=secret)]


@pytest.mark.parametrize(
    ("typed", "level"), [("Read", "read"), (" write", "write"), ("DESTRUCTIVE \n", "destructive")]
)
def test_the_permission_level_may_be_typed_in_any_case_with_spaces(
    typed: str, level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typed into Claude Desktop's form (free text there), `Read` or ` write` is the level meant,
    not a server that refuses to start (issue 33)."""
    monkeypatch.setenv("NEXTCLOUD_MCP_PERMISSIONS", typed)
    assert load_settings(env_file=None).nextcloud_mcp_permissions == level


def test_an_unknown_permission_level_is_still_refused_by_name() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, nextcloud_mcp_permissions="admin")
    assert caught.value.problems == [
        "NEXTCLOUD_MCP_PERMISSIONS must be one of 'read', 'write' or 'destructive'"
    ]


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("https://cloud.example.com/index.php/apps/files/?dir=/&fileid=5", "https://cloud.example.com"),
        ("https://cloud.example.com/index.php", "https://cloud.example.com"),
        ("https://example.com/nextcloud/apps/files/", "https://example.com/nextcloud"),
        ("https://example.com/nextcloud/index.php/apps/notes/#/note/3", "https://example.com/nextcloud"),
        ("https://cloud.example.com/remote.php/dav/files/alice/", "https://cloud.example.com"),
        ("https://cloud.example.com/login?redirect_url=/apps/files", "https://cloud.example.com"),
    ],
)
def test_an_address_copied_from_the_browser_becomes_nextclouds_with_a_note(given: str, address: str) -> None:
    """Issue 33: a URL copied from the address bar gave 401 or 'not a Nextcloud'."""
    settings = load_settings(env_file=None, nextcloud_host=given)
    assert settings.nextcloud_host == address
    assert settings.host_note is not None
    assert f"Set NEXTCLOUD_HOST={address}" in settings.host_note
    assert "?" not in settings.host_note
    assert "#" not in settings.host_note


@pytest.mark.parametrize(
    "given", ["https://cloud.example.com", "https://example.com/nextcloud/", "http://10.0.0.2:8080"]
)
def test_an_address_is_kept_as_it_is(given: str) -> None:
    settings = load_settings(env_file=None, nextcloud_host=given)
    assert settings.nextcloud_host == given.rstrip("/")
    assert settings.host_note is None


def test_a_query_on_an_address_that_is_no_page_is_still_refused() -> None:
    with pytest.raises(ConfigError, match="NEXTCLOUD_HOST must be an http"):
        load_settings(env_file=None, nextcloud_host="https://cloud.example.com/?x=1")
