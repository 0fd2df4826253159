"""The kept answers: per user, bounded by entries and bytes, never kept without a validator."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.config import ConfigError, load_settings
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.runtime import Runtime


def test_an_answer_is_found_only_under_its_user_and_key() -> None:
    kept = KeptAnswers()
    kept.put("alice", "notes:list", '"e1"', ["a"], 10)
    found = kept.get("alice", "notes:list")
    assert found is not None
    assert found.validator == '"e1"'
    assert found.value == ["a"]
    assert kept.get("bob", "notes:list") is None
    assert kept.get("alice", "files:/") is None


def test_no_validator_or_an_oversized_answer_is_not_kept_and_drops_the_stale_one() -> None:
    kept = KeptAnswers(max_bytes=1000)
    kept.put("alice", "k", "v1", "old", 10)
    kept.put("alice", "k", "", "new", 10)
    assert kept.get("alice", "k") is None
    kept.put("alice", "k", "v1", "old", 10)
    kept.put("alice", "k", "v2", "huge", 251)  # over a quarter of the budget
    assert kept.get("alice", "k") is None
    assert kept.size == 0


def test_least_recently_used_go_first_by_count_and_by_bytes() -> None:
    kept = KeptAnswers(max_entries=2, max_bytes=100)
    kept.put("alice", "a", "v", 1, 20)
    kept.put("alice", "b", "v", 2, 20)
    assert kept.get("alice", "a") is not None  # a is now the most recent
    kept.put("alice", "c", "v", 3, 20)
    assert kept.get("alice", "b") is None
    assert len(kept) == 2
    kept.put("bob", "d", "v", 4, 25)
    kept.put("bob", "e", "v", 5, 25)
    assert kept.size <= 100
    assert len(kept) == 2
    assert [kept.get("bob", k) is not None for k in "de"] == [True, True]


def test_forgetting_a_user_or_a_prefix() -> None:
    kept = KeptAnswers()
    for key in ("calendar:a", "calendar:b", "notes:list"):
        kept.put("alice", key, "v", key, 5)
    kept.put("bob", "calendar:a", "v", "bob's", 5)
    kept.forget_user("alice", "calendar:")
    assert kept.get("alice", "calendar:a") is None
    assert kept.get("alice", "notes:list") is not None
    assert kept.get("bob", "calendar:a") is not None
    kept.forget_user("alice")
    assert len(kept) == 1
    assert kept.size == 5


def test_a_budget_that_holds_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        KeptAnswers(max_entries=0)


def test_the_runtime_keeps_answers_within_the_configured_budget() -> None:
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="alice",
        nextcloud_password="app-password",
        nextcloud_kept_answers_mb="8",
    )
    assert Runtime(settings).answers.max_bytes == 8 * 1024 * 1024
    with pytest.raises(ConfigError, match="nextcloud_kept_answers_mb|NEXTCLOUD_KEPT_ANSWERS_MB"):
        load_settings(env_file=None, nextcloud_host="https://c.example", nextcloud_kept_answers_mb="0")
