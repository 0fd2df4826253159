"""Every tool describes itself consistently: scopes, annotations, names, descriptions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from nextcloud_mcp_server.auth.scopes import ALL_SCOPES, require_scopes
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools, enabled_tools
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets import declarations

# Toolsets that act on the user's files use the files scopes (ADR 0047).
# toolsets whose tools use another toolset's scopes (trash, versions, tags, comments, reminders: files)
ON_FILES = {d.name: d.scopes_of for d in declarations() if d.scopes_of}
# calendars and address books themselves: each tool uses the scopes of what it changes, calendar
# or contacts, as the tools that fill them do (ADR 0087)
BY_PREFIX = {"dav_collections": {"nc_calendar_": "calendar", "nc_contacts_": "contacts"}}


def test_every_tool_declares_known_scopes_of_its_own_toolset() -> None:
    """A notes tool needs notes scopes; read-only tools need only read scopes."""
    for spec in all_tools():
        assert spec.scopes, spec.name
        assert set(spec.scopes) <= set(ALL_SCOPES), spec.name
        prefix = ON_FILES.get(spec.toolset, spec.toolset)
        for start, owner in BY_PREFIX.get(spec.toolset, {}).items():
            prefix = owner if spec.name.startswith(start) else prefix
        assert all(s.startswith(f"{prefix}:") for s in spec.scopes), spec.name
        if spec.read_only:
            assert all(s.endswith(":read") for s in spec.scopes), spec.name
        else:
            assert any(s.endswith(":write") for s in spec.scopes), spec.name


def test_names_are_unique_prefixed_and_described() -> None:
    specs = all_tools()
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    for spec in specs:
        assert spec.name.startswith("nc_"), spec.name
        assert len(spec.description) > 60, spec.name  # enough for a model to act on
        assert spec.annotations.read_only_hint is spec.read_only
        assert spec.annotations.destructive_hint is spec.destructive
        linked = {"ui": {"resourceUri": spec.view}, "ui/resourceUri": spec.view} if spec.view else {}
        assert spec.meta == {"nextcloud-mcp/scopes": list(spec.scopes), **linked}


def test_a_tool_without_scopes_or_with_contradicting_hints_is_refused() -> None:
    """Forgetting @require_scopes, or claiming read-only and destructive at once, fails at import."""
    toolset = Toolset("notes")

    async def nc_notes_forgot() -> None:
        """A tool that forgot its scopes."""

    with pytest.raises(ValueError, match="must declare its scopes"):
        toolset.tool(title="x")(nc_notes_forgot)
    with pytest.raises(ValueError, match="both read-only and destructive"):
        toolset.tool(title="x", read_only=True, destructive=True)
    with pytest.raises(ValueError, match="unknown"):
        require_scopes("notes:admin")


@pytest.mark.parametrize("level", ["read", "write", "destructive"])
def test_account_tools_are_offered_at_every_level_in_offline_mode(level: str) -> None:
    """A level limits what may be done to the user's Nextcloud; connecting and disconnecting are
    about the connection itself, so a read-only deployment can still be joined and left."""
    offline = Settings(
        nextcloud_host="https://cloud.example.com",
        oidc_issuer="https://id.example.com",
        mcp_public_url="https://mcp.example.com/mcp",
        mcp_allowed_hosts="mcp.example.com",
        enable_offline_access=True,
        nextcloud_mcp_permissions=level,
    )
    names = {spec.name for spec in enabled_tools(offline)}
    assert {"check_logged_in", "nc_auth_status", "revoke_nextcloud_access"} <= names
    nextcloud = [
        spec for spec in enabled_tools(offline) if spec.name.startswith("nc_") and spec.toolset != "account"
    ]
    offered = [spec for spec in all_tools() if spec.toolset in DEFAULT_TOOLSETS and spec.allowed_at(level)]
    assert nextcloud == offered


async def test_a_returned_model_goes_out_as_structured_content_and_the_same_compact_json() -> None:
    """The text a model reads is the structured content's JSON without indentation; a result a
    tool built itself is passed on untouched."""
    toolset = Toolset("account", nextcloud=False)

    class Out(BaseModel):
        when: datetime
        items: list[int]
        name: str

    built = CallToolResult(content=[TextContent(type="text", text="as built")])

    @toolset.tool(title="Model", read_only=True)
    async def nc_model() -> Out:
        return Out(when=datetime(2026, 1, 2, tzinfo=UTC), items=[1, 2], name="Zoë")

    @toolset.tool(title="Built", read_only=True)
    async def nc_built() -> CallToolResult:
        return built

    model, passed = [await spec.fn() for spec in toolset.specs]
    assert model.structured_content == {"when": "2026-01-02T00:00:00Z", "items": [1, 2], "name": "Zoë"}
    assert [block.text for block in model.content] == [
        '{"when":"2026-01-02T00:00:00Z","items":[1,2],"name":"Zoë"}'
    ]
    assert passed is built
