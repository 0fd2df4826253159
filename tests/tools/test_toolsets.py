"""NEXTCLOUD_MCP_TOOLSETS: which toolsets a deployment offers."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.config import ConfigError, Settings, load_settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools, chosen_toolsets, enabled_tools


def _settings(toolsets: str | None = None) -> Settings:
    extra = {} if toolsets is None else {"nextcloud_mcp_toolsets": toolsets}
    return load_settings(
        env_file=None, nextcloud_host="https://cloud.example.com", nextcloud_username="u", **extra
    )


def _sets(toolsets: str | None) -> set[str]:
    return {spec.toolset for spec in enabled_tools(_settings(toolsets))}


def test_the_default_is_the_core_toolsets() -> None:
    assert _sets(None) == set(DEFAULT_TOOLSETS)
    assert _sets(" Default ") == set(DEFAULT_TOOLSETS)


def test_all_offers_every_toolset() -> None:
    assert _sets("all") == {spec.toolset for spec in all_tools()}


def test_names_choose_exactly_those() -> None:
    assert _sets("notes") == {"notes"}
    assert _sets("notes, files,notes,") == {"notes", "files"}
    assert _sets("default,notes") == set(DEFAULT_TOOLSETS)


def test_an_unknown_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError) as refused:
        chosen_toolsets(_settings("notes,dekc"))
    message = str(refused.value)
    assert "'dekc'" in message
    assert "known: default, all, notes" in message


def test_a_huge_value_is_refused_briefly() -> None:
    with pytest.raises(ConfigError) as refused:
        chosen_toolsets(_settings("x" * 100_000))
    assert len(str(refused.value)) < 400
