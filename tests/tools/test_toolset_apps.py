"""The table of which Nextcloud app a toolset needs, the per-user cache of a user's apps, and the
reading of Nextcloud's answers (docs/ADR/0042-toolsets-by-app.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.nextcloud.apps import AppsCache, enabled_apps
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools, chosen_toolsets
from nextcloud_mcp_server.tools._apps import TOOLSET_APPS, AppMissing, app_of

# The app toolsets of today and their apps (a new one joins without changing this test).
APP_TOOLSETS = {
    "deck": "deck",
    "talk": "spreed",
    "tables": "tables",
    "collectives": "collectives",
    "trash": "files_trashbin",
    "versions": "files_versions",
    "tags": "systemtags",
    "comments": "comments",
}


def _chosen(value: str) -> set[str]:
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="u",
        nextcloud_mcp_toolsets=value,
    )
    return chosen_toolsets(settings)


def test_the_table_names_each_app_toolset_and_its_app() -> None:
    needing = {name: app.id for name, app in TOOLSET_APPS.items() if app is not None}
    assert APP_TOOLSETS.items() <= needing.items()
    assert all(TOOLSET_APPS[name] is None for name in DEFAULT_TOOLSETS)


def test_every_toolset_with_tools_is_in_the_table() -> None:
    """A new toolset module must say here which app it needs (None for Nextcloud's core)."""
    assert {spec.toolset for spec in all_tools()} <= set(TOOLSET_APPS)


def test_app_toolsets_are_known_names_before_their_modules_land() -> None:
    assert _chosen("default,deck") == {*DEFAULT_TOOLSETS, "deck"}
    assert _chosen("talk, comments") == {"talk", "comments"}
    assert _chosen("all") >= set(APP_TOOLSETS) | set(DEFAULT_TOOLSETS)


def test_core_toolsets_need_no_app_and_unknown_names_none() -> None:
    assert app_of("notes") is None
    assert app_of("no-such-toolset") is None
    deck = app_of("deck")
    assert deck is not None
    assert str(AppMissing(deck)).startswith("Deck is not installed or not enabled for you on this Nextcloud")


class FakeOCS:
    """Nextcloud's two answers, as `OCSClient.request` returns their `ocs.data`."""

    def __init__(self, navigation: Any, capabilities: Any) -> None:
        self.answers = {"core/navigation/apps": navigation, "cloud/capabilities": capabilities}

    async def request(self, method: str, endpoint: str, **_: Any) -> Any:
        return self.answers[endpoint]

    def told_capabilities(self, data: Any) -> None:
        """What `enabled_apps` passes on for the toolsets that read a capability (ADR 0094)."""
        self.told = data


async def _apps(navigation: Any, capabilities: Any) -> frozenset[str]:
    return await enabled_apps(FakeOCS(navigation, capabilities))  # type: ignore[arg-type]


async def test_apps_from_navigation_and_capabilities() -> None:
    """As Nextcloud 29 and 34 answer: pages in the navigation, the others as capabilities."""
    navigation = [{"id": "files", "app": "files"}, {"id": "deck"}, {"id": "spreed", "app": "spreed"}]
    files = {"undelete": True, "versioning": True, "comments": True, "bigfilechunking": True}
    capabilities = {"capabilities": {"files": files, "systemtags": {"enabled": True}, "tables": {}}}
    found = await _apps(navigation, capabilities)
    assert found == {"files", "deck", "spreed", "files_trashbin", "files_versions", "comments", "systemtags"}
    # an app's capability alone does not count for an app with a page (group restrictions)
    assert "tables" not in found


async def test_disabled_core_apps_are_absent() -> None:
    capabilities = {"capabilities": {"files": {"undelete": False, "bigfilechunking": True}}}
    assert await _apps([], capabilities) == frozenset()


@pytest.mark.parametrize(
    ("navigation", "capabilities"),
    [
        (None, None),
        ("deck", ["files"]),
        ([1, None, [], {"id": 5}, {"id": ""}, {"id": "x" * 65}], {"capabilities": "none"}),
        ([{"id": "deck"}] * 100_000, {"capabilities": {"files": ["undelete"], "systemtags": None}}),
    ],
)
async def test_malformed_or_huge_answers_give_a_small_set(navigation: Any, capabilities: Any) -> None:
    found = await _apps(navigation, capabilities)
    assert found <= {"deck"}


async def test_a_huge_navigation_is_read_only_in_part() -> None:
    navigation = [{"id": f"app{i}"} for i in range(50_000)]
    assert len(await _apps(navigation, {})) == 1000


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_cache_asks_once_per_user_until_it_expires() -> None:
    clock, asked = Clock(), []
    cache = AppsCache(60, ttl_unknown=5, clock=clock)

    def asker(who: str, apps: frozenset[str]) -> Any:
        async def ask() -> frozenset[str]:
            asked.append(who)
            return apps

        return ask

    alice, bob = frozenset({"deck"}), frozenset({"spreed"})
    assert await cache.apps("alice", asker("alice", alice), ()) == alice
    assert await cache.apps("bob", asker("bob", bob), ()) == bob
    assert await cache.apps("alice", asker("alice", frozenset()), ()) == alice
    assert asked == ["alice", "bob"]
    clock.now = 60.5
    assert await cache.apps("alice", asker("alice", frozenset()), ()) == frozenset()
    assert asked == ["alice", "bob", "alice"]


async def test_a_failure_is_not_known_and_asked_again_soon() -> None:
    clock, calls = Clock(), []
    cache = AppsCache(60, ttl_unknown=5, clock=clock)

    async def down() -> frozenset[str]:
        calls.append(1)
        raise NextcloudError("cloud.example.com", "Nextcloud cannot be reached")

    assert await cache.apps("alice", down, (NextcloudError,)) is None
    assert await cache.apps("alice", down, (NextcloudError,)) is None
    assert len(calls) == 1  # a Nextcloud that is down is not asked on every request
    clock.now = 5.5
    assert await cache.apps("alice", down, (NextcloudError,)) is None
    assert len(calls) == 2


async def test_a_bug_is_not_taken_for_a_failure() -> None:
    async def broken() -> frozenset[str]:
        raise KeyError("bug")

    cache = AppsCache()
    with pytest.raises(KeyError):
        await cache.apps("alice", broken, (NextcloudError,))
    assert len(cache) == 0


async def test_callers_arriving_together_share_one_question() -> None:
    cache, calls = AppsCache(), []
    release = asyncio.Event()

    async def slow() -> frozenset[str]:
        calls.append(1)
        await release.wait()
        return frozenset({"deck"})

    waiting = [asyncio.create_task(cache.apps("alice", slow, ())) for _ in range(20)]
    await asyncio.sleep(0)
    release.set()
    assert {await task for task in waiting} == {frozenset({"deck"})}
    assert len(calls) == 1


async def test_the_cache_is_bounded() -> None:
    cache = AppsCache(max_entries=3)

    async def some() -> frozenset[str]:
        return frozenset()

    for user in range(10):
        await cache.apps(f"user{user}", some, ())
    assert len(cache) == 3


def test_the_cache_refuses_nonsense_limits() -> None:
    for bad in ({"ttl": -1}, {"ttl_unknown": 0}, {"max_entries": 0}):
        with pytest.raises(ValueError, match="lifetimes of 0 or more"):
            AppsCache(**bad)


async def test_a_cache_of_zero_seconds_keeps_nothing() -> None:
    """NEXTCLOUD_APPS_CACHE_SECONDS=0: every request asks (a Nextcloud that cannot be asked is
    still remembered for `ttl_unknown`, so that it is not asked on every request)."""
    settings = load_settings(
        env_file=None,
        nextcloud_host="https://x.example",
        nextcloud_username="a",
        nextcloud_apps_cache_seconds=0,
    )
    cache, asked = AppsCache(settings.nextcloud_apps_cache_seconds), []

    async def ask() -> frozenset[str]:
        asked.append(1)
        return frozenset({"deck"})

    for _ in range(3):
        assert await cache.apps("alice", ask, ()) == {"deck"}
    assert len(asked) == 3
    assert len(cache) == 0
