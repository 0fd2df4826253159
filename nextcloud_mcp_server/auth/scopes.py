"""OAuth scopes of this server and the `@require_scopes` decorator every tool carries.

A tool declares what it needs once, on itself; everything else is derived from that declaration:
the `_meta` of `tools/list`, the scopes advertised in the protected-resource metadata, the
filtering of `tools/list` per token and the step-up challenge on `tools/call`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "ALL_SCOPES",
    "CALENDAR_READ",
    "CALENDAR_WRITE",
    "FILES_READ",
    "FILES_WRITE",
    "NOTES_READ",
    "NOTES_WRITE",
    "declared_scopes",
    "require_scopes",
]

NOTES_READ = "notes:read"
NOTES_WRITE = "notes:write"
CALENDAR_READ = "calendar:read"
CALENDAR_WRITE = "calendar:write"
FILES_READ = "files:read"
FILES_WRITE = "files:write"
ALL_SCOPES = (NOTES_READ, NOTES_WRITE, CALENDAR_READ, CALENDAR_WRITE, FILES_READ, FILES_WRITE)

_ATTR = "__nextcloud_mcp_scopes__"
F = TypeVar("F", bound=Callable[..., Any])


def require_scopes(*scopes: str) -> Callable[[F], F]:
    """Declare the scopes a tool needs. Unknown scope names are a programming error."""
    unknown = [s for s in scopes if s not in ALL_SCOPES]
    if unknown or not scopes:
        raise ValueError(f"unknown or missing scopes: {unknown or scopes}")

    def decorate(fn: F) -> F:
        setattr(fn, _ATTR, tuple(scopes))
        return fn

    return decorate


def declared_scopes(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The scopes `fn` declared with `@require_scopes`, or () if it declared none."""
    return tuple(getattr(fn, _ATTR, ()))
