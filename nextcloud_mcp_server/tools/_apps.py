"""Toolsets of Nextcloud apps: offered only to a user for whom the app is enabled
(docs/ADR/0042-toolsets-by-app.md).

Which app a toolset needs, its declaration says (`toolsets/<name>/__init__.py`); `TOOLSET_APPS`
is read from the declarations. A toolset module names its toolset (`Toolset("deck")`) and nothing
more: the registry looks the app up here, refuses a call
when the caller's Nextcloud does not have it (`require_app`), and `offer_available` leaves the
toolset out of that caller's `tools/list`.

Each user's apps are asked once and cached (`Runtime.apps`); nothing is asked at start, nor at
all when no chosen toolset needs an app. When Nextcloud cannot be asked (down, an account not yet
connected in offline-access mode) the apps are not known: `tools/list` shows the chosen toolsets
as they are, so that a passing failure hides nothing, and a call goes on to meet the failure
itself (or the consent request), which says what is wrong.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.context import CallNext, ServerRequestContext
from mcp.types import ListToolsResult

from nextcloud_mcp_server.auth.caller import Caller, caller_key, caller_of
from nextcloud_mcp_server.auth.credentials import NoCaller
from nextcloud_mcp_server.auth.errors import GrantMissing, OIDCUnavailable
from nextcloud_mcp_server.nextcloud.apps import enabled_apps, nextcloud_major
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.storage.errors import DecryptionFailed
from nextcloud_mcp_server.tools._context import context_in, runtime_of
from nextcloud_mcp_server.toolsets import App, declarations

if TYPE_CHECKING:
    from nextcloud_mcp_server.runtime import Runtime

__all__ = [
    "TOOLSET_APPS",
    "App",
    "AppMissing",
    "app_of",
    "apps_of",
    "missing",
    "needing",
    "offer_available",
    "require_app",
    "usable",
]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


# toolset -> the app it needs; None: Nextcloud's core (and Notes), offered as always
TOOLSET_APPS: dict[str, App | None] = {found.name: found.app for found in declarations() if found.chosen}
# What stops Nextcloud from being asked; anything else is a bug and is not hidden.
FAILURES: tuple[type[Exception], ...] = (
    NextcloudError,
    GrantMissing,
    OIDCUnavailable,
    DecryptionFailed,
    NoCaller,
    TimeoutError,
)
ASK_SECONDS = 10.0  # a `tools/list` waits no longer than this for Nextcloud


class AppMissing(Exception):
    """The caller's Nextcloud does not have the app a tool needs."""

    def __init__(self, app: App) -> None:
        super().__init__(
            f"{app.name} is not installed or not enabled for you on this Nextcloud (app '{app.id}'); "
            "an administrator can install or enable it"
        )
        self.app = app


class AppTooOld(AppMissing):
    """The app is there, but the caller's Nextcloud is older than the toolset's API needs."""

    def __init__(self, app: App, major: int) -> None:
        Exception.__init__(
            self,
            f"{app.name} cannot be used on this Nextcloud {major}: the {app.name} release for it "
            f"lacks the API this server speaks, which needs Nextcloud {app.nextcloud_from} or later",
        )
        self.app = app


def missing(app: App, present: frozenset[str]) -> AppMissing | None:
    """Why `app` cannot be used with the apps `present` (and the Nextcloud version they were
    found on), or None when it can."""
    if app.id not in present:
        return AppMissing(app)
    major = nextcloud_major(present)
    if app.nextcloud_from is not None and major is not None and major < app.nextcloud_from:
        return AppTooOld(app, major)
    return None


def usable(app: App | None, present: frozenset[str] | None) -> bool:
    """Whether a toolset needing `app` is offered to a caller with the apps `present` (None: not
    known, offered as it is)."""
    return app is None or present is None or missing(app, present) is None


def app_of(toolset: str) -> App | None:
    """The app a toolset needs (None for the core toolsets and for names not in the table)."""
    return TOOLSET_APPS.get(toolset)


async def apps_of(runtime: Runtime, caller: Caller | None) -> frozenset[str] | None:
    """The apps enabled for the caller (cached per user), or None when Nextcloud cannot say."""

    async def ask() -> frozenset[str]:
        nc = await runtime.client_for(caller)
        async with asyncio.timeout(ASK_SECONDS):
            return await enabled_apps(nc.ocs)

    return await runtime.apps.apps(caller_key(caller), ask, FAILURES)


async def require_app(runtime: Runtime, caller: Caller | None, app: App) -> None:
    """Raise `AppMissing` when Nextcloud says the app is not enabled for the caller (`AppTooOld`
    when its Nextcloud is older than the toolset's API needs); when it cannot say, the call goes
    on."""
    present = await apps_of(runtime, caller)
    refused = missing(app, present) if present is not None else None
    if refused is not None:
        raise refused


def needing(app: App, fn: F) -> F:
    """`fn` (a tool) refused with `AppMissing` for a caller whose Nextcloud lacks `app`."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        ctx = context_in(kwargs)
        if ctx is not None:
            await require_app(runtime_of(ctx), caller_of(ctx), app)
        return await fn(*args, **kwargs)

    return call  # type: ignore[return-value]


def offer_available(tool_apps: Mapping[str, App]) -> Any:
    """Server middleware: `tools/list` leaves out the tools (`tool_apps`: name -> app) whose app
    the caller's Nextcloud does not have."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result
        if isinstance(result, ListToolsResult):
            result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result
        if not any(isinstance(t, dict) and t.get("name") in tool_apps for t in result["tools"]):
            return result  # nothing listed needs an app (the default before any is enabled): not asked
        present = await apps_of(ctx.lifespan_context, caller_of(ctx))
        if present is None:
            return result

        def offered(tool: Any) -> bool:
            return usable(tool_apps.get(tool.get("name", "")) if isinstance(tool, dict) else None, present)

        return {**result, "tools": [tool for tool in result["tools"] if offered(tool)]}

    return middleware
