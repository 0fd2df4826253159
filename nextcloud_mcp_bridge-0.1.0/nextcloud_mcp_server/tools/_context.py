"""What a tool body needs from the request: the runtime and a Nextcloud client for the caller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.auth.caller import caller_of

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.runtime import Runtime

__all__ = ["context_in", "nextcloud_for", "runtime_in", "runtime_of"]


def runtime_of(ctx: Context[Any, Any]) -> Runtime:
    """The `Runtime` the server's lifespan yielded."""
    return cast("Runtime", ctx.request_context.lifespan_context)


def context_in(arguments: dict[str, Any]) -> Context[Any, Any] | None:
    """The request's `Context` among a tool's keyword arguments."""
    return next((value for value in arguments.values() if isinstance(value, Context)), None)


def runtime_in(arguments: dict[str, Any]) -> Runtime | None:
    """The runtime of the request whose `Context` is among a tool's keyword arguments."""
    ctx = context_in(arguments)
    return runtime_of(ctx) if ctx is not None else None


async def nextcloud_for(ctx: Context[Any, Any]) -> NextcloudClient:
    """A Nextcloud client carrying the credential of whoever made this request."""
    return await runtime_of(ctx).client_for(caller_of(ctx))
