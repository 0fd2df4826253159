"""Toolsets that appear when needed (docs/ADR/0070-toolsets-that-appear-when-needed.md).

A deployment serves the toolsets of NEXTCLOUD_MCP_TOOLSETS, listed from the start, and those of
NEXTCLOUD_MCP_ON_DEMAND, listed to a caller only after they enabled them with `nc_toolsets`. The
enabled set is kept per user (their identity provider's subject, or the one user of single-user
mode), in this process, never shared between users. The list is what a model reads, not a
permission: every served tool can be called whether it is listed or not, with the same checks
(the app, the Nextcloud version, scopes, approvals), directly by name or through `nc_call_tool`
for a client that only calls tools it listed.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    ToolAnnotations,
    ToolListChangedNotification,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from nextcloud_mcp_server.auth.caller import Caller, caller_key, caller_of
from nextcloud_mcp_server.auth.scopes import missing_scopes
from nextcloud_mcp_server.tools._apps import apps_of, missing
from nextcloud_mcp_server.tools._context import runtime_of
from nextcloud_mcp_server.toolsets import ToolEntry, declaration

__all__ = [
    "CALL_TOOL",
    "TOOLSETS_TOOL",
    "EnabledToolsets",
    "OnDemand",
    "listed_when_enabled",
]

TOOLSETS_TOOL = "nc_toolsets"
CALL_TOOL = "nc_call_tool"
MAX_NAMES = 8  # toolset names per call, each at most 40 characters
MAX_DETAILED = 30  # tools described in full in one answer (a few toolsets' worth)
MAX_DESCRIPTION = 600  # characters of each tool's description in that answer


class EnabledToolsets:
    """The on-demand toolsets each user enabled, for `idle` seconds after their last use; at most
    `max_users` users (the least recently used is forgotten first)."""

    def __init__(
        self, *, idle: float = 86_400.0, max_users: int = 4096, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if idle <= 0 or max_users < 1:
            raise ValueError("enabled toolsets need a positive lifetime and room for one user")
        self.idle, self.max_users, self._clock = idle, max_users, clock
        self._users: OrderedDict[Hashable, tuple[float, frozenset[str]]] = OrderedDict()

    def of(self, key: Hashable) -> frozenset[str]:
        entry = self._users.get(key)
        if entry is None:
            return frozenset()
        if entry[0] <= self._clock():
            del self._users[key]
            return frozenset()
        self._users[key] = (self._clock() + self.idle, entry[1])
        self._users.move_to_end(key)
        return entry[1]

    def set(self, key: Hashable, names: frozenset[str]) -> None:
        if not names:
            self._users.pop(key, None)
            return
        self._users[key] = (self._clock() + self.idle, names)
        self._users.move_to_end(key)
        while len(self._users) > self.max_users:
            self._users.popitem(last=False)


def listed_when_enabled(on_demand: Mapping[str, str], enabled: EnabledToolsets) -> Any:
    """Server middleware: `tools/list` leaves out the tools of on-demand toolsets (`on_demand`:
    tool name -> toolset) the caller has not enabled."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result
        mine = enabled.of(caller_key(caller_of(ctx)))
        if isinstance(result, ListToolsResult):
            result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result

        def listed(tool: Any) -> bool:
            toolset = on_demand.get(tool.get("name", "")) if isinstance(tool, dict) else None
            return toolset is None or toolset in mine

        return {**result, "tools": [tool for tool in result["tools"] if listed(tool)]}

    return middleware


Names = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=MAX_NAMES)]


@dataclass
class OnDemand:
    """The two tools of toolsets on demand, for one server: `nc_toolsets` lists what the caller
    may enable and enables or disables it; `nc_call_tool` calls any served tool by name."""

    specs: Sequence[ToolEntry]  # the on-demand toolsets' tools, as the index knows them (ADR 0093)
    listed: frozenset[str]  # the toolsets listed from the start
    enabled: EnabledToolsets
    server: MCPServer[Any] | None = None  # set once the server is built
    # builds and registers the named tools not built yet (docs/ADR/0092); set with the server
    built: Callable[[Sequence[str]], None] = lambda names: None

    def description(self, tool: str) -> str:
        """What `tools/list` says of `tool`: for nc_toolsets, the toolsets it reaches, by title."""
        if tool == CALL_TOOL:
            return (
                "Call a tool of this server by name with its arguments, as if called directly: "
                f"for tools enabled with {TOOLSETS_TOOL} that your client does not offer yet."
            )
        titles = ", ".join(declaration(name).title for name in self._toolsets())
        return (
            f"More tools for the user's Nextcloud: {titles}. Without arguments: those this user can "
            "enable. `enable`: list their tools; the answer describes them (call them by "
            f"name, or through {CALL_TOOL}). `disable`: hide them again."
        )

    def toolset_of(self) -> dict[str, str]:
        return {spec.name: spec.toolset for spec in self.specs}

    def _toolsets(self) -> dict[str, list[ToolEntry]]:
        found: dict[str, list[ToolEntry]] = {}
        for spec in self.specs:
            found.setdefault(spec.toolset, []).append(spec)
        return found

    async def _usable(self, ctx: Context[Any, Any]) -> tuple[dict[str, list[ToolEntry]], dict[str, str]]:
        """The on-demand toolsets this caller can use, with the tools their scopes allow, and
        why each of the others cannot be used."""
        caller: Caller | None = caller_of(ctx)
        present = await apps_of(runtime_of(ctx), caller)
        usable: dict[str, list[ToolEntry]] = {}
        not_usable: dict[str, str] = {}
        for name, specs in self._toolsets().items():
            app = declaration(name).app
            refused = missing(app, present) if app is not None and present is not None else None
            allowed = [s for s in specs if caller is None or not missing_scopes(s.scopes, caller.scopes)]
            if refused is not None:
                not_usable[name] = str(refused)
            elif not allowed:
                # the scopes of a reading tool: the least that makes the toolset usable
                least = next((s for s in specs if s.read_only), specs[0])
                not_usable[name] = f"your authorization lacks its scopes ({' '.join(least.scopes)})"
            else:
                usable[name] = allowed
        return usable, not_usable

    async def toolsets(
        self, ctx: Context[Any, Any], enable: Names | None = None, disable: Names | None = None
    ) -> CallToolResult:
        """The on-demand toolsets this caller can use; enable or disable some for them (kept for a
        day after their last use), telling a listening client that its list changed."""
        usable, not_usable = await self._usable(ctx)
        key = caller_key(caller_of(ctx))
        before = self.enabled.of(key)
        enable, disable = self._named(enable), self._named(disable)
        asked = list(dict.fromkeys([*enable, *disable]))
        unknown = [name for name in asked if name not in usable and name not in self.listed]
        if unknown:
            why = "; ".join(f"{name}: {not_usable[name]}" for name in unknown if name in not_usable)
            choices = ", ".join(sorted(usable)) or "none"
            raise ToolError(
                f"no toolset {', '.join(repr(n[:40]) for n in unknown)} to enable for you"
                f"{f' ({why})' if why else ''}; available: {choices}; nothing was changed"
            )
        now = (before | {n for n in enable if n in usable}) - set(disable)
        now &= frozenset(usable)
        # an enabled toolset's tools are built before anyone lists them (for every user: the
        # server's registry is one, and tools/list shows each caller what they enabled)
        toolsets = self._toolsets()
        self.built([spec.name for name in now for spec in toolsets[name]])
        self.enabled.set(key, frozenset(now))
        added = [name for name in usable if name in now and name not in before]
        if now != before:
            await _tell_the_list_changed(ctx)
        answer: dict[str, Any] = {
            "toolsets": [
                {
                    "name": name,
                    "title": declaration(name).title,
                    "summary": declaration(name).summary,
                    "tools": len(specs),
                    "enabled": name in now,
                }
                for name, specs in usable.items()
            ],
            "already_listed": sorted(self.listed),
        }
        if not_usable:
            answer["not_available"] = [{"name": name, "why": why} for name, why in not_usable.items()]
        if added:
            answer["enabled_now"] = added
            answer["tools_enabled_now"] = await self._described([s for n in added for s in usable[n]])
            answer["how_to_call"] = (
                f"Call these tools by name; if your client does not offer them yet, call {CALL_TOOL} "
                "with their name and arguments."
            )
        text = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=answer)

    def _named(self, given: list[str] | None) -> list[str]:
        """Toolset names as given, or their titles, in any case."""
        titles = {declaration(name).title.lower(): name for name in self._toolsets()}
        named = [" ".join(name.split()).lower() for name in given or []]
        return [titles.get(name, name) for name in named]

    async def _described(self, specs: list[ToolEntry]) -> list[dict[str, Any]]:
        """What a client that never lists tools again needs to call these: name, what it does,
        its arguments (as `tools/list` would show them); at most MAX_DETAILED in full."""
        wanted = {spec.name for spec in specs}
        assert self.server is not None
        shown = {tool.name: tool for tool in await self.server.list_tools() if tool.name in wanted}
        described: list[dict[str, Any]] = []
        for spec in specs:
            tool = shown.get(spec.name)
            if tool is None:
                continue
            if len(described) >= MAX_DETAILED:
                described.append({"name": spec.name})
                continue
            text = tool.description or spec.title
            cut = text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"
            described.append({"name": spec.name, "description": cut, "input_schema": tool.input_schema})
        return described

    async def call(
        self,
        name: Annotated[str, Field(max_length=64)],
        ctx: Context[Any, Any],
        arguments: dict[str, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """Another served tool, called with the same checks as when called directly."""
        if name in (TOOLSETS_TOOL, CALL_TOOL):
            raise ToolError(f"{CALL_TOOL} calls the other tools; call {name} directly")
        assert self.server is not None
        return await self.server.call_tool(name, arguments or {}, ctx)


async def _tell_the_list_changed(ctx: Context[Any, Any]) -> None:
    """`notifications/tools/list_changed` on this call's own stream, so that a client that listens
    (handshake era) lists again. The 2026-07-28 era has no such channel outside
    `subscriptions/listen`, which this server does not serve (docs/ADR/0067): those clients get the
    tools in the answer, and in their next `tools/list`."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.request_id is None:
        return
    await ctx.session.send_notification(ToolListChangedNotification(), related_request_id=ctx.request_id)


ANNOTATIONS = {
    TOOLSETS_TOOL: ToolAnnotations(
        title="More Nextcloud tools", read_only_hint=False, idempotent_hint=True, open_world_hint=False
    ),
    CALL_TOOL: ToolAnnotations(title="Call a Nextcloud tool by name", open_world_hint=False),
}
