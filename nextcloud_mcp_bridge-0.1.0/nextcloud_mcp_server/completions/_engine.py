"""`completion/complete`: values for an argument being typed, from the caller's own Nextcloud.

The SDK hands a completion handler only the reference, the argument and its context, not the
request; a server middleware keeps the request of each `completion/complete` in a context
variable so the handler knows who is asking (the bearer token of that very HTTP request, as for
tools), and nothing else is read from it.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mcp.server.context import CallNext, ServerRequestContext
from mcp.types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from nextcloud_mcp_server.auth.caller import Caller, caller_key, caller_of
from nextcloud_mcp_server.auth.errors import GrantMissing, OIDCUnavailable
from nextcloud_mcp_server.auth.scopes import missing_scopes
from nextcloud_mcp_server.completions._cache import BriefCache
from nextcloud_mcp_server.completions._sources import MAX_TYPED, SOURCES, Found, Source
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError
from nextcloud_mcp_server.storage.errors import DecryptionFailed

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from nextcloud_mcp_server.runtime import Runtime

__all__ = ["MAX_VALUES", "Completer", "register"]

logger = logging.getLogger(__name__)

MAX_VALUES = 100  # the protocol's cap on the values of one completion
TTL_SECONDS = 30.0
# Selections kept across all users, each at most MAX_CANDIDATES values of at most MAX_VALUE
# characters: some 16 million characters at the very worst.
MAX_CACHED = 128
NOTHING = Completion(values=[], total=0, has_more=False)
# What a completion that could not ask Nextcloud answers: nothing, and no hint of why.
FAILURES = (NextcloudError, InvalidInput, GrantMissing, OIDCUnavailable, DecryptionFailed)

_request: ContextVar[ServerRequestContext[Any, Any] | None] = ContextVar("completion_request", default=None)


async def remember_request(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Server middleware: the request of a `completion/complete`, for the handler to see its caller."""
    if ctx.method != "completion/complete":
        return await call_next(ctx)
    token = _request.set(ctx)
    try:
        return await call_next(ctx)
    finally:
        _request.reset(token)


class Completer:
    """Completes by argument name (`SOURCES`), for whichever template or prompt names it so."""

    def __init__(
        self,
        runtime: Runtime,
        sources: dict[str, Source] | None = None,
        toolsets: frozenset[str] | None = None,
    ) -> None:
        self.runtime = runtime
        # only the sources of the chosen toolsets (NEXTCLOUD_MCP_TOOLSETS; None: all), ADR 0060
        self.sources = {
            name: source
            for name, source in (SOURCES if sources is None else sources).items()
            if toolsets is None or source.toolset in toolsets
        }
        self.cache: BriefCache[Found] = BriefCache(TTL_SECONDS, MAX_CACHED)

    async def complete(self, name: str, typed: str, caller: Caller | None) -> Completion:
        source = self.sources.get(name)
        if source is None or len(typed) > MAX_TYPED:
            return NOTHING
        if caller is not None and missing_scopes([source.scope], caller.scopes):
            return NOTHING  # as the tools: this token may not read that part of Nextcloud
        selection = source.selection(typed)
        if selection is None:
            return NOTHING
        key = (caller_key(caller), name, selection)
        try:
            # the caller's credential first, every time (ADR 0060): a user whose grant is gone
            # gets nothing at once, never what was kept for them
            nc = await self.runtime.client_for(caller)
            found = self.cache.get(key)
            if found is None:
                found = await source.fetch(nc, selection)
                self.cache.put(key, found)
        except FAILURES as exc:
            logger.info("completion of %r found nothing: %s", name, type(exc).__name__)
            return NOTHING
        values = source.matching(typed, found)
        return Completion(
            values=values[:MAX_VALUES],
            total=None if found.cut else len(values),
            has_more=len(values) > MAX_VALUES or found.cut,
        )


def register(server: MCPServer[Any], runtime: Runtime, toolsets: frozenset[str] | None = None) -> Completer:
    """Answer `completion/complete` on `server` for resource templates and the server's prompts,
    for the chosen `toolsets` only (None: all)."""
    completer = Completer(runtime, toolsets=toolsets)
    server.middleware.append(remember_request)

    async def complete(
        ref: ResourceTemplateReference | PromptReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion:
        if isinstance(ref, PromptReference) and ref.name not in {p.name for p in await server.list_prompts()}:
            return NOTHING
        request = _request.get()
        return await completer.complete(argument.name, argument.value, caller_of(request))

    server.completion()(complete)  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated
    return completer
