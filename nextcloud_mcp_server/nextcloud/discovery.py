"""Facts discovered once per user and process (never secrets), kept in bounded maps."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DiscoveryCache"]


class _BoundedDict(dict[str, str]):
    """A dict that forgets its oldest entries beyond `limit` (insertion order)."""

    def __init__(self, limit: int = 10_000) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        while len(self) > self.limit:
            del self[next(iter(self))]


@dataclass
class DiscoveryCache:
    """What is discovered once per user and process: facts about the account, never secrets."""

    dav_user_ids: dict[str, str] = field(default_factory=_BoundedDict)
    calendar_homes: dict[str, str] = field(default_factory=_BoundedDict)
