"""The HTTP side of being an OAuth 2.1 resource server.

- Protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and at the
  path-inserted form for the MCP endpoint, with the scopes the tools declare.
- `RequireBearer`: no valid token -> 401 with `WWW-Authenticate: Bearer error="invalid_token",
  scope="...", resource_metadata="..."` (RFC 6750 §3, RFC 9728 §5.1): the scopes the tools use,
  which the MCP authorization specification has clients ask for first.
- `StepUpGate`: a `tools/call` for a tool (or a `resources/read` of a resource) whose scopes the
  token lacks -> 403 `insufficient_scope` with `scope="<held> <needed>"`, so OAuth clients can
  re-authorize.
- `tool_list_filter`: `tools/list` shows only the tools the token's scopes allow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import ListToolsResult
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nextcloud_mcp_server.auth.caller import caller_from_scope, caller_of
from nextcloud_mcp_server.auth.scopes import ScopeStyle, advertised, missing_scopes

__all__ = [
    "RequireBearer",
    "StepUpGate",
    "metadata_url",
    "protected_resource_metadata",
    "tool_list_filter",
    "www_authenticate",
]

SCOPES_META_KEY = "nextcloud-mcp/scopes"


def metadata_url(resource: str) -> str:
    """RFC 9728 §3.1: the well-known segment is inserted between host and path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))


def protected_resource_metadata(
    resource: str, issuer: str, scopes: list[str], *, name: str = "Nextcloud"
) -> dict[str, Any]:
    return {
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    }


def www_authenticate(
    error: str, resource_metadata: str, *, scope: str | None = None, description: str = ""
) -> str:
    parts = [f'error="{error}"']
    if scope is not None:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{resource_metadata}"')
    if description:
        parts.append(f'error_description="{description}"')
    return "Bearer " + ", ".join(parts)


class RequireBearer:
    """Lets a request through only with a valid bearer token."""

    def __init__(self, app: ASGIApp, resource_metadata: str, scopes: list[str] | None = None) -> None:
        self.app = app
        self.resource_metadata = resource_metadata
        self.scope = " ".join(scopes) if scopes else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and caller_from_scope(scope) is None:
            described = "a valid bearer token for this server is required"
            header = www_authenticate(
                "invalid_token", self.resource_metadata, scope=self.scope, description=described
            )
            body = {"error": "invalid_token", "error_description": described}
            await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": header})(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)


def _no_scopes(uri: str) -> tuple[str, ...]:
    return ()


class StepUpGate:
    """Answers a `tools/call` (or a `resources/read`) the token has no scope for with 403
    insufficient_scope. `resource_scopes` gives the scopes reading a resource URI needs."""

    def __init__(
        self,
        app: ASGIApp,
        tool_scopes: Mapping[str, tuple[str, ...]],
        resource_metadata: str,
        style: ScopeStyle,
        resource_scopes: Callable[[str], tuple[str, ...]] = _no_scopes,
        call_through: str | None = None,
    ) -> None:
        self.app = app
        self.call_through = call_through  # a tool that calls the tool named in its `name` argument
        self.tool_scopes = tool_scopes
        self.resource_metadata = resource_metadata
        self.style = style
        self.resource_scopes = resource_scopes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = caller_from_scope(scope)
        if scope["type"] != "http" or scope["method"] != "POST" or caller is None:
            await self.app(scope, receive, send)
            return
        body, replay = await _buffer(receive)
        needed: list[str] = []
        called = _called(body, "tools/call", "name")
        if self.call_through in called:  # the scopes of the tool it calls (docs/ADR/0070)
            called += _called_through(body, self.call_through)
        asked = [self.tool_scopes.get(tool, ()) for tool in called]
        asked += [self.resource_scopes(uri) for uri in _called(body, "resources/read", "uri")]
        for scopes in asked:
            needed += [s for s in missing_scopes(scopes, caller.scopes) if s not in needed]
        if needed:
            wanted = advertised([*caller.scopes, *needed], self.style)
            described = f"this call needs {' '.join(advertised(needed, self.style))}"
            header = www_authenticate(
                "insufficient_scope", self.resource_metadata, scope=" ".join(wanted), description=described
            )
            answer = {
                "error": "insufficient_scope",
                "error_description": described,
                "scope": " ".join(wanted),
            }
            await JSONResponse(answer, status_code=403, headers={"WWW-Authenticate": header})(
                scope, replay, send
            )
            return
        await self.app(scope, replay, send)


async def _buffer(receive: Receive) -> tuple[bytes, Receive]:
    """Read the request body (up to the SDK's own limit) and a receive that replays it."""
    chunks: list[bytes] = []
    size, more, trailing = 0, True, None
    while more:
        message = await receive()
        if message["type"] != "http.request":
            trailing = message
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        more = bool(message.get("more_body"))
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            break
    body = b"".join(chunks)
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]
    if trailing is not None:
        pending.append(trailing)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return body, replay


def _called_through(body: bytes, tool: str) -> list[str]:
    """The tools named by the `name` argument of each `tools/call` of `tool`."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # the SDK answers what it cannot parse
        return []
    messages = payload if isinstance(payload, list) else [payload]
    params = [m.get("params") for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
    found = [p.get("arguments") for p in params if isinstance(p, dict) and p.get("name") == tool]
    return [str(a["name"]) for a in found if isinstance(a, dict) and "name" in a]


def _called(body: bytes, method: str, key: str) -> list[str]:
    """The `params[key]` of each `method` request in a message or a batch."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # the SDK answers what it cannot parse
        return []
    messages = payload if isinstance(payload, list) else [payload]
    return [
        str(m["params"][key])
        for m in messages
        if isinstance(m, dict)
        and m.get("method") == method
        and isinstance(m.get("params"), dict)
        and key in m["params"]
    ]


async def tool_list_filter(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Server middleware: `tools/list` shows only the tools the caller's scopes allow.

    The chain hands back the result already shaped for the wire (a dict with camelCase keys)."""
    result = await call_next(ctx)
    if ctx.method != "tools/list":
        return result
    caller = caller_of(ctx)
    if caller is None:
        return result
    if isinstance(result, ListToolsResult):
        result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
        return result

    def allowed(tool: Any) -> bool:
        needed = ((tool.get("_meta") or {}) if isinstance(tool, dict) else {}).get(SCOPES_META_KEY, [])
        return not missing_scopes(needed, caller.scopes)

    return {**result, "tools": [tool for tool in result["tools"] if allowed(tool)]}
