"""Which Nextcloud apps are enabled for a user, and a cache of the answer per user.

Nextcloud has no endpoint a plain user may call that lists the apps enabled for them, so two
answers are combined (both checked on Nextcloud 29 and 34):

- `/ocs/v2.php/core/navigation/apps`: the apps with a page of their own that the user may open
  (Deck, Talk as `spreed`, Tables, Collectives). An app enabled only for other groups is absent.
  Collectives names no capability, and an app's capability may outlive a group restriction, so
  for these apps the navigation alone decides.
- `/ocs/v2.php/cloud/capabilities`: the apps without a page show there while enabled: the trash
  as `files.undelete`, versions as `files.versioning`, comments as `files.comments`, system tags
  as `systemtags`, notifications as `notifications`, user status as `user_status` (and Activity,
  which also has a page, as `activity`). File reminders name no capability (their toolset is
  offered as Nextcloud's own, ADR 0074).

The capabilities also say Nextcloud's major version: an app whose API this server speaks only from
some Nextcloud on (Collectives 3.0 needs Nextcloud 30) is not usable on an older one.

Nextcloud 34 keeps which apps are enabled in its local memory cache: a change made with `occ` may
take a request or two to show.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from nextcloud_mcp_server.nextcloud.ocs import OCSClient

__all__ = ["AppsCache", "EnabledApps", "enabled_apps", "nextcloud_major"]

# capability -> app, for apps without a page: a key of `capabilities`, or a flag of `files`
_CAPABILITY_APPS = {
    "systemtags": "systemtags",
    "activity": "activity",
    "notifications": "notifications",
    "user_status": "user_status",
}
_FILES_FLAGS = {"undelete": "files_trashbin", "versioning": "files_versions", "comments": "comments"}
MAX_APPS = 1000  # what is kept of an answer: no Nextcloud has that many apps
MAX_ID = 64  # Nextcloud's app ids are at most 64 characters (oc_appconfig)


def _ids(values: Any) -> set[str]:
    """App ids from a list of navigation entries (malformed entries are skipped)."""
    if not isinstance(values, list):
        return set()
    entries = [entry for entry in values[:MAX_APPS] if isinstance(entry, dict)]
    found = [entry.get(key) for entry in entries for key in ("id", "app")]  # 29 names no `app`
    return {value for value in found if isinstance(value, str) and 0 < len(value) <= MAX_ID}


class EnabledApps(frozenset[str]):
    """App ids, and the Nextcloud major version they run on (None when Nextcloud did not say)."""

    major: int | None

    def __new__(cls, ids: Any = (), major: int | None = None) -> EnabledApps:
        found = super().__new__(cls, ids)
        found.major = major
        return found


def nextcloud_major(apps: frozenset[str]) -> int | None:
    """The Nextcloud major version `apps` were found on, when known."""
    return apps.major if isinstance(apps, EnabledApps) else None


def _major(data: Any) -> int | None:
    version = data.get("version") if isinstance(data, dict) else None
    major = version.get("major") if isinstance(version, dict) else None
    return major if isinstance(major, int) and not isinstance(major, bool) and 0 < major < 1000 else None


def _from_capabilities(data: Any) -> set[str]:
    caps = data.get("capabilities") if isinstance(data, dict) else None
    if not isinstance(caps, dict):
        return set()
    found = {app for key, app in _CAPABILITY_APPS.items() if caps.get(key)}
    files = caps.get("files")
    if isinstance(files, dict):
        found |= {app for flag, app in _FILES_FLAGS.items() if files.get(flag)}
    return found


async def enabled_apps(ocs: OCSClient) -> EnabledApps:
    """The ids of the apps Nextcloud shows as enabled for the user of `ocs`, and its version."""
    navigation, capabilities = await asyncio.gather(
        ocs.request("GET", "core/navigation/apps"),
        ocs.request("GET", "cloud/capabilities"),
    )
    ocs.told_capabilities(capabilities)  # a toolset reading a capability asks nothing more
    return EnabledApps(_ids(navigation) | _from_capabilities(capabilities), _major(capabilities))


class AppsCache:
    """Each user's enabled apps for `ttl` seconds; at most `max_entries` users (the least recently
    used is forgotten first). A user's first callers arriving together share one question to
    Nextcloud. When Nextcloud cannot be asked the answer is None ("not known"), remembered for
    `ttl_unknown` seconds so that a Nextcloud that is down is not asked on every request.
    `ttl` 0 keeps nothing: every request asks (callers arriving together still share one
    question)."""

    def __init__(
        self,
        ttl: float = 300.0,
        *,
        ttl_unknown: float = 15.0,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl < 0 or ttl_unknown <= 0 or max_entries < 1:
            raise ValueError("the apps cache needs lifetimes of 0 or more and room for one user")
        self.ttl, self.ttl_unknown, self.max_entries = ttl, ttl_unknown, max_entries
        self._clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, frozenset[str] | None]] = OrderedDict()
        self._pending: dict[Hashable, asyncio.Future[frozenset[str] | None]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, key: Hashable) -> None:
        self._entries.pop(key, None)

    async def apps(
        self,
        key: Hashable,
        ask: Callable[[], Awaitable[frozenset[str]]],
        failures: tuple[type[Exception], ...],
    ) -> frozenset[str] | None:
        """The apps of the user `key`: cached, or asked with `ask`; None when `ask` raised one of
        `failures` (any other exception is a bug and propagates)."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] > self._clock():
            self._entries.move_to_end(key)
            return entry[1]
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[frozenset[str] | None] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            try:
                found: frozenset[str] | None = await ask()
            except failures:
                found = None
            self._put(key, found)
            future.set_result(found)
            return found
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # marked as seen: nobody need be waiting
            raise
        finally:
            del self._pending[key]

    def _put(self, key: Hashable, found: frozenset[str] | None) -> None:
        ttl = self.ttl if found is not None else self.ttl_unknown
        if ttl == 0:
            self._entries.pop(key, None)
            return
        self._entries[key] = (self._clock() + ttl, found)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
