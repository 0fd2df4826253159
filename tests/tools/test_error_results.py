"""Every error result of every tool is one a strict client accepts (issue 33, item 1).

A tool's output schema describes its answer. The TypeScript SDK's client also checks the
structured content of error results against it, and throws -32602 instead of handing the result
on, so a refusal carrying structured content of its own ({"declined": true}) never reached the
model. Here every registered tool with an output schema is served with a body that fails in each
way the code base can fail (Nextcloud errors, refused input, missing grants, crashes, each
approval refusal made by the real approval code, conflicts, a result built by hand), under the
tool's own name and output schema, and every result is checked by the strict client's rule.
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from nextcloud_mcp_server import server as server_module
from nextcloud_mcp_server.auth.errors import GrantMissing, OIDCUnavailable
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError
from nextcloud_mcp_server.storage.errors import DecryptionFailed
from nextcloud_mcp_server.tools import account_tools, all_tools
from nextcloud_mcp_server.tools._approval import approve_removal, refuse_changed, require_approval
from nextcloud_mcp_server.tools._output_schema import published_output
from nextcloud_mcp_server.tools._registry import Toolset, ToolSpec
from nextcloud_mcp_server.tools._results import ERROR_META_KEY, stale_version
from tests.mcp_clients import Human, http_session, running_app
from tests.strict_clients import strict_problem, text_of

pytestmark = pytest.mark.integration

QUESTION = 'Delete the note "Bank" in category "Private"?'


class Current(BaseModel):
    id: int
    etag: str


async def _nextcloud(ctx: Context[Any, Any]) -> Any:
    raise NextcloudError("cloud.example.com", "not found (404)")


async def _invalid(ctx: Context[Any, Any]) -> Any:
    raise InvalidInput("the path may not contain '..'")


async def _identity_provider(ctx: Context[Any, Any]) -> Any:
    raise OIDCUnavailable("connection refused")


async def _grant(ctx: Context[Any, Any]) -> Any:
    raise GrantMissing("alice")


async def _store(ctx: Context[Any, Any]) -> Any:
    raise DecryptionFailed("no key fits")


async def _crash(ctx: Context[Any, Any]) -> Any:
    raise RuntimeError("a bug")


async def _ask(ctx: Context[Any, Any]) -> Any:
    await require_approval(ctx, tool="nc_x", target='the note "Bank"', question=QUESTION, version="1")
    raise AssertionError("approved; the test's human never approves")


async def _removal_at_level_write(ctx: Context[Any, Any]) -> Any:
    await approve_removal(ctx, tool="nc_x", target='the note "Bank"', question=QUESTION, version="1")


async def _changed(ctx: Context[Any, Any]) -> Any:
    await refuse_changed(ctx, tool="nc_x", target='the note "Bank"')


async def _stale(ctx: Context[Any, Any]) -> Any:
    return stale_version(
        ValueError("the note changed since you read it"), "note", "current_note", Current(id=1, etag="e2")
    )


async def _built(ctx: Context[Any, Any]) -> Any:
    return CallToolResult(
        is_error=True,
        content=[TextContent(type="text", text="Not done: a refusal the tool wrote itself.")],
        structured_content={"refused": "by the tool"},
    )


# kind -> (how the body fails, the decision it leaves in _meta, if any)
KINDS: dict[str, tuple[Callable[[Context[Any, Any]], Awaitable[Any]], str | None]] = {
    "nextcloud": (_nextcloud, None),
    "invalid": (_invalid, None),
    "identity_provider": (_identity_provider, None),
    "grant": (_grant, None),
    "store": (_store, None),
    "crash": (_crash, None),
    "removal_at_level_write": (_removal_at_level_write, "refused_level"),
    "changed": (_changed, "refused_changed"),
    "stale": (_stale, None),
    "built": (_built, None),
}
# what the approval code answers, per kind of client (a read-only tool never asks)
ASKED = {"decline": "declined", "cancel": "cancelled", "no_elicitation": "refused_no_elicitation"}


def _published(spec: ToolSpec) -> dict[str, Any] | None:
    schema = Tool.from_function(spec.fn, name=spec.name).output_schema
    return None if schema is None else published_output(schema)


@functools.cache
def published() -> dict[str, tuple[ToolSpec, dict[str, Any]]]:
    """Every tool with an output schema, and that schema as published: made once, when a test
    first asks (at import it cost every worker's collection 1.3 s, and the test made it again
    for each kind of client)."""
    found = ((spec, _published(spec)) for spec in all_tools() + account_tools())
    return {spec.name: (spec, schema) for spec, schema in found if schema is not None}


def stand_in(spec: ToolSpec) -> ToolSpec:
    """A tool with `spec`'s name, hints and return annotation (so the same output schema),
    registered the way every tool is, whose body fails as its `kind` argument says."""
    returns = typing.get_type_hints(inspect.unwrap(spec.fn), include_extras=True)["return"]

    async def body(kind: str, ctx: Context[Any, Any]) -> Any:
        if kind in ASKED:
            return await _ask(ctx)
        return await KINDS[kind][0](ctx)

    body.__name__ = body.__qualname__ = spec.name
    body.__doc__ = spec.description
    body.__annotations__ = {"kind": str, "ctx": Context, "return": returns}
    toolset = Toolset(spec.toolset, nextcloud=False)
    toolset.tool(
        title=spec.title, read_only=spec.read_only, destructive=spec.destructive, idempotent=spec.idempotent
    )(body)
    return toolset.specs[0]


@pytest.fixture
def at_level_write(settings: Settings) -> Settings:
    """Asking on, level write (where a removing update is refused without asking)."""
    return settings.model_copy(update={"nextcloud_mcp_permissions": "write", "confirm_destructive": True})


async def test_every_error_result_of_every_tool_is_valid_for_strict_clients(
    at_level_write: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Each way of failing, for each tool with an output schema: an error result with readable
    text, and structured content only where it matches the schema (here: never)."""
    caplog.set_level(logging.CRITICAL, "mcp.server.mcpserver.server")  # the crashes' tracebacks
    real = {name: spec for name, (spec, _) in published().items()}
    stand_ins = [stand_in(spec) for spec in real.values()]
    monkeypatch.setattr(server_module, "offered_tools", lambda settings: stand_ins)
    monkeypatch.setattr(server_module, "on_demand_tools", lambda settings: [])
    problems: list[str] = []
    calls = 0
    with running_app(at_level_write) as base:
        for client, decision in ASKED.items():
            human = Human(action="cancel" if client == "cancel" else "decline")
            answers: dict[str, Any] = (
                {} if client == "no_elicitation" else {"elicitation_callback": human.answer}
            )
            kinds: dict[str, str | None] = {client: decision}
            if client == "decline":  # the other ways of failing need no particular client
                kinds |= {kind: expected for kind, (_, expected) in KINDS.items()}
            async with http_session(f"{base}/mcp", **answers) as session:
                listed = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
                assert listed == {name: schema for name, (_, schema) in published().items()}
                for name, spec in real.items():
                    for kind, expected in kinds.items():
                        if kind in ("decline", "cancel") and spec.read_only:
                            continue  # read-only calls are answered in plain JSON: they never ask
                        result = await session.call_tool(name, {"kind": kind})
                        calls += 1
                        where = f"{name}/{kind}"
                        if not result.is_error:
                            problems.append(f"{where}: not an error")
                        if not text_of(result).strip():
                            problems.append(f"{where}: no text for the model")
                        problem = strict_problem(listed[name], result)
                        if problem:
                            problems.append(f"{where}: {problem}")
                        details = (result.meta or {}).get(ERROR_META_KEY, {})
                        if expected is not None and details.get("decision") != expected:
                            problems.append(f"{where}: decision {details!r} in _meta, not {expected}")
    assert not problems, "\n".join([f"{len(problems)} results a strict client refuses:", *problems[:30]])
    assert calls > 10 * len(real)


def test_every_tool_with_an_output_schema_is_covered() -> None:
    """The tools above are all of them (those of offline access included)."""
    assert len(published()) >= 40
    assert {"nc_notes_delete_note", "nc_webdav_delete_resource", "nc_auth_status"} <= set(published())
