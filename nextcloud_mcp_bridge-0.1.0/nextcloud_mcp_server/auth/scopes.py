"""OAuth scopes of this server and the `@require_scopes` decorator every tool carries.

A tool declares what it needs once, on itself; everything else is derived from that declaration:
the `_meta` of `tools/list`, the scopes advertised in the protected-resource metadata, the
filtering of `tools/list` per token, the step-up challenge on `tools/call`, and the check inside
the tool itself (defence in depth when the HTTP gate is bypassed, e.g. over stdio).

Which scopes exist, and what they let a client do, each toolset declares
(`toolsets/<name>/__init__.py`); `ALL_SCOPES` is read from there.

Scopes are written `notes:read`; the dotted form `notes.read` is accepted as the same scope,
because some identity providers refuse colons. Which form is advertised is a setting.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from nextcloud_mcp_server import toolsets
from nextcloud_mcp_server.auth.caller import caller_of

__all__ = [
    "ALL_SCOPES",
    "CALENDAR_READ",
    "CALENDAR_WRITE",
    "COLLECTIVES_READ",
    "COLLECTIVES_WRITE",
    "CONTACTS_READ",
    "CONTACTS_WRITE",
    "DECK_READ",
    "DECK_WRITE",
    "FILES_READ",
    "FILES_WRITE",
    "NOTES_READ",
    "NOTES_WRITE",
    "SEARCH_READ",
    "SHARING_READ",
    "SHARING_WRITE",
    "TABLES_READ",
    "TABLES_WRITE",
    "TALK_READ",
    "TALK_WRITE",
    "advertised",
    "declared_scopes",
    "missing_scopes",
    "normalize",
    "require_scopes",
]

# The scopes the tools of the toolsets written before their declarations declare; a new toolset's
# tools use their declaration's `read` and `write` (toolsets/_declaration.py).
NOTES_READ = "notes:read"
NOTES_WRITE = "notes:write"
CALENDAR_READ = "calendar:read"
CALENDAR_WRITE = "calendar:write"
FILES_READ = "files:read"
FILES_WRITE = "files:write"
CONTACTS_READ = "contacts:read"
CONTACTS_WRITE = "contacts:write"
SHARING_READ = "sharing:read"
SHARING_WRITE = "sharing:write"
SEARCH_READ = "search:read"
COLLECTIVES_READ = "collectives:read"
COLLECTIVES_WRITE = "collectives:write"
TALK_READ = "talk:read"
TALK_WRITE = "talk:write"
DECK_READ = "deck:read"
DECK_WRITE = "deck:write"
TABLES_READ = "tables:read"
TABLES_WRITE = "tables:write"
# Every scope of this server, in the registry's order, from the toolsets' declarations
ALL_SCOPES = tuple(scope.name for scope in toolsets.scopes())

ScopeStyle = Literal["colon", "dot"]
_ATTR = "__nextcloud_mcp_scopes__"
F = TypeVar("F", bound=Callable[..., Any])


def normalize(scopes: Iterable[str]) -> frozenset[str]:
    """Canonical (colon) forms; `notes.read` and `notes:read` are the same scope."""
    canonical = set()
    for scope in scopes:
        head, dot, tail = scope.partition(".")
        candidate = f"{head}:{tail}" if dot else scope
        canonical.add(candidate if candidate in ALL_SCOPES else scope)
    return frozenset(canonical)


def advertised(scopes: Iterable[str], style: ScopeStyle) -> list[str]:
    """Scopes in the form this deployment advertises, in a stable order."""
    ordered = sorted(normalize(scopes), key=lambda s: (ALL_SCOPES.index(s) if s in ALL_SCOPES else 99, s))
    return [s.replace(":", ".") if style == "dot" and s in ALL_SCOPES else s for s in ordered]


def missing_scopes(needed: Iterable[str], held: Iterable[str]) -> list[str]:
    have = normalize(held)
    return [s for s in needed if s not in have]


def require_scopes(*scopes: str) -> Callable[[F], F]:
    """Declare the scopes a tool needs, and refuse the call inside the tool when an OAuth caller
    lacks them. Unknown scope names are a programming error."""
    unknown = [s for s in scopes if s not in ALL_SCOPES]
    if unknown or not scopes:
        raise ValueError(f"unknown or missing scopes: {unknown or scopes}")

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        async def checked(*args: Any, **kwargs: Any) -> Any:
            ctx = next((v for v in (*args, *kwargs.values()) if isinstance(v, Context)), None)
            caller = caller_of(ctx) if ctx is not None else None
            if caller is not None:
                lacking = missing_scopes(scopes, caller.scopes)
                if lacking:
                    raise ToolError(
                        f"insufficient_scope: this tool needs {' '.join(lacking)}; "
                        "re-authorize the client with that scope"
                    )
            return await fn(*args, **kwargs)

        setattr(checked, _ATTR, tuple(scopes))
        return checked  # type: ignore[return-value]

    return decorate


def declared_scopes(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The scopes `fn` declared with `@require_scopes`, or () if it declared none."""
    return tuple(getattr(fn, _ATTR, ()))
