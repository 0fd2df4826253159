"""The server middleware that serves `nextcloud://` resources.

A middleware, not the SDK's resource templates, because the SDK lists resources without knowing
who asks (no per-user listing, no cursor) and gives every resource of a template the template's
one MIME type (a file has its own). The SDK's own resources (e.g. `ui://` views) pass through
untouched and are listed first (docs/ADR/0039-resources.md).

Every read: the URI is matched and checked, the caller's scopes are checked (the scope the read
tools of that kind declare), the caller must have connected their Nextcloud (offline-access mode:
the same consent answer as a tool's), and Nextcloud's refusals become one clear JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    InputRequiredResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)
from pydantic import BaseModel, ValidationError

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.auth.errors import GrantMissing, OIDCUnavailable
from nextcloud_mcp_server.auth.scopes import missing_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError, NotFound
from nextcloud_mcp_server.resources._kinds import ICONS_OF, KINDS, ResourceKind, match
from nextcloud_mcp_server.resources._listing import listed_page
from nextcloud_mcp_server.resources._uris import MAX_URI_CHARS, SCHEME
from nextcloud_mcp_server.storage.errors import DecryptionFailed

__all__ = ["resource_scopes", "resources_for", "serve_resources"]


def resource_scopes(uri: str) -> tuple[str, ...]:
    """The scopes reading `uri` needs (for the HTTP step-up gate); () when it is not one of ours."""
    found = match(uri) if uri.startswith(SCHEME) and len(uri) <= MAX_URI_CHARS else None
    return (found[0].scope,) if found is not None else ()


def _wire(result: HandlerResult) -> dict[str, Any]:
    """A handler's result in its wire form (a dict with camelCase keys)."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(result or {})


def _allowed(context: Context[Any, Any], kind: ResourceKind) -> bool:
    caller = caller_of(context)
    return caller is None or not missing_scopes([kind.scope], caller.scopes)


def resources_for(
    toolsets: frozenset[str] | None,
) -> Callable[[ServerRequestContext[Any, Any], CallNext], Coroutine[Any, Any, HandlerResult]]:
    """`serve_resources` for a deployment whose NEXTCLOUD_MCP_TOOLSETS chose `toolsets` (None:
    all): a kind of resource, its template, its listing and its reading exist only where its
    toolset is chosen, exactly as its tools do (ADR 0060)."""

    async def serve(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        return await serve_resources(ctx, call_next, toolsets)

    return serve


def _offered(kind: ResourceKind, toolsets: frozenset[str] | None) -> bool:
    return toolsets is None or ICONS_OF[kind.name] in toolsets


async def serve_resources(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext, toolsets: frozenset[str] | None = None
) -> HandlerResult:
    """Server middleware: `resources/read` of a `nextcloud://` URI, and the caller's resources
    and templates added to `resources/list` and `resources/templates/list`."""
    if ctx.method == "resources/read":
        uri = (ctx.params or {}).get("uri")
        if isinstance(uri, str) and uri.startswith(SCHEME):
            return await _read(ctx, uri, toolsets)
        return await call_next(ctx)
    if ctx.method == "resources/templates/list":
        answer = _wire(await call_next(ctx))
        context: Context[Any, Any] = Context(request_context=ctx)
        ours = [kind.template().model_dump(mode="json", by_alias=True, exclude_none=True) for kind in KINDS]
        allowed = [
            template
            for kind, template in zip(KINDS, ours, strict=True)
            if _allowed(context, kind) and _offered(kind, toolsets)
        ]
        return {**answer, "resourceTemplates": [*answer.get("resourceTemplates", []), *allowed]}
    if ctx.method == "resources/list":
        try:
            cursor = PaginatedRequestParams.model_validate(ctx.params or {}).cursor
        except ValidationError:
            raise MCPError(code=INVALID_PARAMS, message="invalid resources/list parameters") from None
        answer = _wire(await call_next(ctx))
        try:
            page, following = await listed_page(Context(request_context=ctx), cursor, toolsets)
        except InvalidInput as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        except NextcloudError as exc:
            raise MCPError(code=INTERNAL_ERROR, message=f"listing your resources failed: {exc}") from None
        ours = [resource.model_dump(mode="json", by_alias=True, exclude_none=True) for resource in page]
        theirs = answer.get("resources", []) if cursor is None else []  # the SDK's own: on page one
        answer = {**answer, "resources": [*theirs, *ours]}
        answer.pop("nextCursor", None)
        return {**answer, "nextCursor": following} if following else answer
    return await call_next(ctx)


async def _read(
    ctx: ServerRequestContext[Any, Any], uri: str, toolsets: frozenset[str] | None
) -> ReadResourceResult | InputRequiredResult:
    try:
        params = ReadResourceRequestParams.model_validate(ctx.params or {})
    except ValidationError:
        raise MCPError(code=INVALID_PARAMS, message="invalid resources/read parameters") from None
    data = {"uri": uri[:200]}
    if len(uri) > MAX_URI_CHARS:
        raise MCPError(
            code=INVALID_PARAMS, message=f"resource URI longer than {MAX_URI_CHARS} characters", data=data
        )
    found = match(uri)
    if found is None or not _offered(found[0], toolsets):
        known = ", ".join(kind.uri_template for kind in KINDS if _offered(kind, toolsets)) or "none"
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"unknown resource {uri[:200]}; the templates are: {known}",
            data=data,
        )
    kind, values = found
    context: Context[Any, Any] = Context(request_context=ctx, input_params=params)
    if not _allowed(context, kind):
        raise MCPError(
            code=INVALID_REQUEST,
            message=f"insufficient_scope: reading {kind.name} resources needs {kind.scope}; "
            "re-authorize the client with that scope",
            data={**data, "error": "insufficient_scope", "scope": kind.scope},
        )
    try:
        result = await kind.read(context, uri, values)
    except NotFound as exc:
        raise MCPError(code=INVALID_PARAMS, message=f"resource not found: {exc.message}", data=data) from None
    except InvalidInput as exc:
        raise MCPError(code=INVALID_PARAMS, message=f"invalid resource URI: {exc}", data=data) from None
    except NextcloudError as exc:
        raise MCPError(code=INTERNAL_ERROR, message=str(exc), data=data) from None
    except GrantMissing:
        raise MCPError(
            code=INVALID_REQUEST,
            message="access to your Nextcloud was revoked or has expired; ask again to reconnect",
            data=data,
        ) from None
    except OIDCUnavailable as exc:
        raise MCPError(
            code=INTERNAL_ERROR, message=f"the identity provider cannot be reached: {exc}"
        ) from None
    except DecryptionFailed as exc:
        raise MCPError(
            code=INTERNAL_ERROR,
            message=f"your stored Nextcloud access cannot be read ({exc}); ask your administrator",
        ) from None
    if isinstance(result, InputRequiredResult):
        return result  # 2026-07-28: the consent URL, asked for in the conversation
    if isinstance(result, CallToolResult):  # not connected: the text (and URL) a tool would answer
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise MCPError(code=INVALID_REQUEST, message=text, data={**data, **(result.meta or {})})
    return ReadResourceResult(contents=result)
