"""`build_server(settings, runtime)`: the MCP server with its toolsets registered.

This is the only module that constructs the SDK's server class.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, Icon, InputRequiredResult, ToolAnnotations
from mcp.types import Tool as ListedTool
from pydantic import ValidationError

from nextcloud_mcp_server import DISTRIBUTION, __version__
from nextcloud_mcp_server.auth.request_state import request_state_security
from nextcloud_mcp_server.completions import register as register_completions
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.icons import SERVER, icons_for
from nextcloud_mcp_server.prompts import register_prompts
from nextcloud_mcp_server.resources import resources_for
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.tools import chosen_toolsets, offered_tools, on_demand_tools, toolset_tools
from nextcloud_mcp_server.tools._apps import app_of, offer_available
from nextcloud_mcp_server.tools._arguments import UNKNOWN_KEYS, strict
from nextcloud_mcp_server.tools._listing import listed
from nextcloud_mcp_server.tools._on_demand import (
    ANNOTATIONS,
    CALL_TOOL,
    TOOLSETS_TOOL,
    EnabledToolsets,
    OnDemand,
    listed_when_enabled,
)
from nextcloud_mcp_server.tools._output_schema import published_input, published_output
from nextcloud_mcp_server.tools._registry import ToolSpec
from nextcloud_mcp_server.toolsets import ToolEntry
from nextcloud_mcp_server.views import register_views

__all__ = [
    "CACHE_HINTS",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "SETUP_TOOL",
    "build_explaining_server",
    "build_listed",
    "build_server",
    "setup_problem_text",
]

SERVER_NAME = DISTRIBUTION  # serverInfo.name: the command people installed
# Freshness hints on list results (2026-07-28 clients): each caller's lists depend on who calls
# (scopes, the apps enabled for them), so every hint is "private"; a minute, well inside the apps
# cache (NEXTCLOUD_APPS_CACHE_SECONDS), for what changes only with the deployment. resources/list
# names recent notes, which change any time: no hint (docs/ADR/0067).
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    "tools/list": CacheHint(ttl_ms=60_000, scope="private"),
    "resources/templates/list": CacheHint(ttl_ms=60_000, scope="private"),
}
INSTRUCTIONS = (
    "Tools for the user's own Nextcloud. Notes: find a note with nc_notes_search_notes or "
    "nc_notes_list_notes, read it with nc_notes_get_note, and pass its etag to "
    "nc_notes_update_note; prefer nc_notes_append_content for adding text. When an update is "
    "refused as a conflict, the current note comes back with the error: merge and retry."
)


def readable(name: str, error: ValidationError) -> str:
    """Arguments that do not fit the schema, in one line naming each argument (pydantic's own text
    carries the rejected value, whatever its size, and a documentation URL)."""
    problems = []
    for item in error.errors()[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"'{where}' is required")
        elif item["type"] == UNKNOWN_KEYS:  # names the known keys: all of them, not cut
            problems.append(f"'{where}': {item['msg']}" if item["loc"] else item["msg"])
        else:
            problems.append(f"'{where}': {item['msg'][:200]}")
    more = f" (and {error.error_count() - 5} more)" if error.error_count() > 5 else ""
    return f"Error executing tool {name}: invalid arguments: {'; '.join(problems)}{more}; nothing was done"


class _Server(MCPServer[Runtime]):
    """The SDK's server with readable argument errors, and tools built when first needed: the
    tools of toolsets served on demand are built (their models and schemas made) and registered
    when a caller enables their toolset or calls one of them, not at start (docs/ADR/0092); the
    listed ones are listed from `toolsets/listing.jsonl` until built (docs/ADR/0093)."""

    _order: tuple[str, ...] = ()  # every served tool's name, in the order tools/list shows them
    _waiting: dict[str, ToolEntry]  # served tools not built yet, by name (their index entries)
    _shown: dict[str, ListedTool]  # listed tools not built yet, as tools/list shows them

    def serve_later(
        self, order: Sequence[str], entries: Sequence[ToolEntry], shown: Mapping[str, ListedTool]
    ) -> None:
        self._order = tuple(order)
        self._waiting = {entry.name: entry for entry in entries}
        self._shown = dict(shown)
        self._building = threading.Lock()  # the warm-up builds in a worker thread (ADR 0093)

    def waiting_listed(self) -> list[str]:
        """The listed tools not built yet, in the order of tools/list."""
        return [name for name in self._order if name in getattr(self, "_shown", {})]

    def built(self, names: Sequence[str]) -> None:
        """Build and register those of `names` not built yet, keeping the order of tools/list
        (the SDK lists its registry's dict in insertion order; a test fails if that seam moves).
        A toolset's tools module is imported here, the first time one of its tools is built
        (docs/ADR/0093). The registry is replaced, never changed in place: a listing on the
        event loop may be reading it while the warm-up builds."""
        waiting: dict[str, ToolEntry] = getattr(self, "_waiting", {})
        if not any(name in waiting for name in names):
            return
        with self._building:
            made = [_spec(waiting[name]) for name in names if name in waiting]
            if not made:
                return
            registered = {**self._tool_manager._tools, **{spec.name: _tool(spec) for spec in made}}
            ordered = {name: registered[name] for name in self._order if name in registered}
            self._tool_manager._tools = {**ordered, **registered}
            for spec in made:  # all built, then none waits
                del waiting[spec.name]
                self._shown.pop(spec.name, None)

    async def list_tools(self) -> list[ListedTool]:
        """The built tools as the SDK lists them, and the listed ones not built yet as the listing
        file shows them, in the order of tools/list."""
        shown = dict(getattr(self, "_shown", {}))
        built = {tool.name: tool for tool in await super().list_tools()}
        ordered = [built.get(name) or shown[name] for name in self._order if name in built or name in shown]
        placed = set(self._order)
        return ordered + [tool for name, tool in built.items() if name not in placed]

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        self.built([name])  # header validation (2026-07-28 era) sees a tool not built yet
        return super()._tool_input_schema(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Runtime, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        self.built([name])  # a served tool answers by name whether listed or not (ADR 0070)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(readable(name, cause)) from cause
            raise


def build_server(settings: Settings, runtime: Runtime) -> MCPServer[Runtime]:
    """An `MCPServer` whose lifespan yields `runtime` (opened and closed by the caller)."""

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[Runtime]:
        yield runtime

    middleware: list[Any] = []
    if settings.oauth_enabled:
        from nextcloud_mcp_server.auth.resource_server import tool_list_filter

        middleware.append(tool_list_filter)
    served = offered_tools(settings)
    # toolsets of Nextcloud apps: listed only for users who have the app (docs/ADR/0042)
    tool_apps = {spec.name: app for spec in served if (app := app_of(spec.toolset))}
    if tool_apps:
        middleware.append(offer_available(tool_apps))
    # toolsets on demand: listed to a caller once they enabled them (docs/ADR/0070); their tools
    # are built when enabled or first called (docs/ADR/0092)
    on_demand = OnDemand(on_demand_tools(settings), frozenset(chosen_toolsets(settings)), EnabledToolsets())
    later = {spec.name for spec in on_demand.specs}
    # the listed toolsets' tools: listed from the listing file until built, at their first call or
    # by the warm-up (docs/ADR/0093); their modules are imported then. A tool handed in as a
    # `ToolSpec` (a stand-in) or missing from the file (not regenerated) is built now, as before.
    listed_now = [entry for entry in served if entry.name not in later]
    found = listed({entry.toolset for entry in listed_now if not isinstance(entry, ToolSpec)})
    shown = {e.name: found[e.name] for e in listed_now if not isinstance(e, ToolSpec) and e.name in found}
    tools = [_tool(_spec(entry)) for entry in listed_now if entry.name not in shown]
    if on_demand.specs:
        # after the apps' filter, so inside it: that one sees only what is listed, and asks
        # Nextcloud nothing while no tool of an app is (the default before anything is enabled)
        middleware.append(listed_when_enabled(on_demand.toolset_of(), on_demand.enabled))
        for name, fn in ((TOOLSETS_TOOL, on_demand.toolsets), (CALL_TOOL, on_demand.call)):
            described = on_demand.description(name)
            title = ANNOTATIONS[name].title or name
            tools.append(_made(fn, name, title, described, ANNOTATIONS[name], None, icons_for(SERVER)))
    # nextcloud:// resources and completions of the chosen toolsets only (docs/ADR/0039, 0060)
    toolsets = frozenset(chosen_toolsets(settings))
    middleware.append(resources_for(toolsets))
    server = _Server(
        SERVER_NAME,
        title="Nextcloud",
        icons=list(icons_for(SERVER)),
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level=settings.log_level,
        middleware=middleware,
        tools=tools,
        request_state_security=request_state_security(settings),  # every replica reads it (ADR 0055)
        cache_hints=CACHE_HINTS,
        subscriptions=False,  # nothing is served on subscriptions/listen (docs/ADR/0067)
    )
    waiting = [spec for spec in listed_now if spec.name in shown] + list(on_demand.specs)
    server.serve_later([spec.name for spec in served] + [TOOLSETS_TOOL, CALL_TOOL], waiting, shown)
    on_demand.server, on_demand.built = server, server.built
    if on_demand.specs:  # `initialize` says the tool list may change (handshake era)
        _advertise_tools_list_changed(server)
    register_completions(
        server, runtime, toolsets
    )  # completion/complete (docs/ADR/0040-completions-and-icons.md)
    # MCP Apps: the `ui://` views the enabled tools link to (nextcloud_mcp_server/views)
    register_views(server, [spec.view for spec in served])
    register_prompts(server, toolsets)  # slash commands of the chosen toolsets (docs/ADR/0077)
    _advertise_only_what_is_served(server)
    return server


def build_listed(server: MCPServer[Any]) -> None:
    """Build the listed tools not built yet (docs/ADR/0093): over HTTP at start, over stdio by the
    warm-up after the handshake (in a worker thread), so that a first call finds its tool built."""
    if isinstance(server, _Server):
        for name in server.waiting_listed():  # one at a time: a call meanwhile waits for one build
            server.built([name])


# Each tool's models and schemas are made once per process and shared by the servers it builds
# (nothing changes a Tool once built): making them is most of a build, about 0.3 s of CPU for the
# default toolsets, and the test suite builds a server for nearly every test.
_BUILT: dict[int, tuple[ToolSpec, Tool]] = {}  # id(spec) -> (spec, its tool); specs live forever


def _spec(entry: ToolEntry) -> ToolSpec:
    """The tool an index entry names, from its toolset's tools module (imported now, once)."""
    if isinstance(entry, ToolSpec):
        return entry
    found = {spec.name: spec for spec in toolset_tools(entry.toolset)}
    return found[entry.name]  # KeyError: index.json is stale (`make docs`; tests/test_generated.py)


def _tool(spec: ToolSpec) -> Tool:
    built = _BUILT.get(id(spec))
    if built is not None and built[0] is spec:
        return built[1]
    tool = _made(spec.fn, spec.name, spec.title, spec.description, spec.annotations, spec.meta, spec.icons)
    _BUILT[id(spec)] = (spec, tool)
    return tool


def _made(
    fn: Any,
    name: str,
    title: str,
    description: str,
    annotations: ToolAnnotations,
    meta: dict[str, Any] | None,
    icons: Sequence[Icon] = (),
) -> Tool:
    """A tool as the SDK serves it: unknown argument keys refused, the published schemas."""
    tool = Tool.from_function(
        fn,
        name=name,
        title=title,
        description=description,
        annotations=annotations,
        meta=meta,
        icons=list(icons) or None,
    )
    strict(tool)  # unknown keys are refused, not ignored
    # what tools/list shows (arguments are validated by the pydantic model of the signature)
    tool.parameters = published_input(tool.parameters)
    if tool.fn_metadata.output_schema is not None:
        # what clients validate each result against; the SDK reads the field live
        tool.fn_metadata.output_schema = published_output(tool.fn_metadata.output_schema)
    return tool


def _advertise_tools_list_changed(server: MCPServer[Any]) -> None:
    """The SDK takes `listChanged` from options its runners never pass (SDK_NOTES: no public knob):
    the handshake's options are made with `tools_changed` here. The 2026-07-28 era derives it from
    `subscriptions/listen`, which is not served (docs/ADR/0067), so it stays false there."""
    low = server._lowlevel_server
    made = type(low).create_initialization_options
    low.create_initialization_options = functools.partial(  # type: ignore[method-assign]
        made, low, NotificationOptions(tools_changed=True)
    )


def _advertise_only_what_is_served(server: MCPServer[Any]) -> None:
    """The SDK registers prompts/list and prompts/get on every MCPServer, and capabilities follow the
    registered handlers: without prompts, drop them, so `initialize` advertises no `prompts`
    (docs/ADR/0067; a test fails if the SDK's seam moves)."""
    if not server._prompt_manager.list_prompts():
        for method in ("prompts/list", "prompts/get"):
            server._lowlevel_server._request_handlers.pop(method, None)


SETUP_TOOL = "nextcloud_setup_problem"


def setup_problem_text(problems: Sequence[str]) -> str:
    """What the person must fix, as the model will read it out."""
    lines = "\n".join(f"- {problem}" for problem in problems)
    return (
        "The Nextcloud server is not set up correctly, so none of its tools are available. "
        f"Tell the user exactly this:\n{lines}\n"
        "Fix it where the server is configured (in Claude Desktop: Settings > Extensions > "
        "Nextcloud > Configure), then turn the extension off and on again. "
        "`nextcloud-mcp-bridge check` says the same with the same settings."
    )


def build_explaining_server(problems: Sequence[str]) -> MCPServer[Any]:
    """A server for settings that cannot work (docs/ADR/0066): `initialize` answers, with the
    problems in its instructions, and its one tool, whose description names them too, answers
    every call with them as an error. It reaches nothing and holds no secret."""
    text = setup_problem_text(problems)

    def nextcloud_setup_problem() -> str:
        raise ToolError(text)

    tool = Tool.from_function(
        nextcloud_setup_problem,
        name=SETUP_TOOL,
        title="Nextcloud is not set up",
        description=f"Call this to learn why Nextcloud cannot be used. {text}",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        title="Nextcloud",
        icons=list(icons_for(SERVER)),
        version=__version__,
        instructions=text,
        tools=[tool],
        subscriptions=False,
    )
    _advertise_only_what_is_served(server)
    return server
