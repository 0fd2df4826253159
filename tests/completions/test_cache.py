"""The completions' cache: entries live `ttl` seconds and there are never more than `max_entries`."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.completions._cache import BriefCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_lives_its_ttl_and_no_longer() -> None:
    clock = Clock()
    cache: BriefCache[str] = BriefCache(30, 4, clock)
    cache.put("k", "v")
    clock.now += 29.9
    assert cache.get("k") == "v"
    clock.now += 0.1
    assert cache.get("k") is None
    assert len(cache) == 0  # an expired entry is dropped when met


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: BriefCache[int] = BriefCache(30, 3, Clock())
    for n in range(3):
        cache.put(n, n)
    assert cache.get(0) == 0  # used: 1 is now the oldest
    for n in range(3, 1000):
        cache.put(n, n)
        assert len(cache) <= 3
    assert cache.get(1) is None
    assert cache.get(999) == 999


@pytest.mark.parametrize(("ttl", "entries"), [(0, 1), (1, 0), (-1, 5)])
def test_a_cache_that_could_hold_nothing_is_refused(ttl: float, entries: int) -> None:
    with pytest.raises(ValueError, match="positive lifetime"):
        BriefCache(ttl, entries)
