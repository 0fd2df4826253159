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
