"""Scopes: dotted and colon forms, advertising, and the refusal inside a tool."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from nextcloud_mcp_server.auth.scopes import advertised, missing_scopes, normalize, require_scopes


def test_dotted_and_colon_forms_are_one_scope() -> None:
    assert normalize(["notes.read", "notes:write", "openid"]) == {"notes:read", "notes:write", "openid"}
    assert missing_scopes(["notes:read", "notes:write"], ["notes.read"]) == ["notes:write"]
    assert advertised(["files:write", "notes.read"], "dot") == ["notes.read", "files.write"]
    assert advertised(["files:write", "notes.read"], "colon") == ["notes:read", "files:write"]


def _context_with_scopes(scopes: list[str]) -> Context:  # type: ignore[type-arg]
    user = AuthenticatedUser(AccessToken(token="t", client_id="c", scopes=scopes, subject="alice"))
    request = SimpleNamespace(scope={"user": user})
    return Context(request_context=SimpleNamespace(request=request))  # type: ignore[arg-type]


async def test_the_decorator_refuses_inside_the_tool_when_a_scope_is_missing() -> None:
    """Defence in depth: even if the HTTP gate were bypassed, the tool itself refuses."""
    ran = []

    @require_scopes("notes:write")
    async def tool(ctx: Context) -> str:  # type: ignore[type-arg]
        ran.append(True)
        return "done"

    with pytest.raises(ToolError, match="insufficient_scope: this tool needs notes:write"):
        await tool(ctx=_context_with_scopes(["notes:read"]))
    assert ran == []
    assert await tool(ctx=_context_with_scopes(["notes.write"])) == "done"
