"""Answers a tool builds by hand when its return annotation cannot say everything: a model with
its JSON text, refusals, and the refusal of an update made against an old version.

An error result never carries structured content. A tool's output schema describes its answer,
not its refusals, and strict clients (the TypeScript SDK, and every host built on it) validate
structured content against that schema even when `isError` is set: a refusal with its own
structured content broke the call with -32602 instead of reaching the model. What a program may
want from a refusal (the decision, the current version of an item) goes into the result's
`_meta` under `ERROR_META_KEY`; the text says it all for the model.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

__all__ = ["ERROR_META_KEY", "answer", "for_every_client", "refusal", "stale_version"]

ERROR_META_KEY = "nextcloud-mcp/error"


def answer(model: BaseModel) -> CallToolResult:
    """`model` as structured content, and the same as compact JSON text for clients that read
    only text (the SDK's own text for a returned model is indented: about 40% more characters
    for the model to read in a listing, and more bytes to send)."""
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json(by_alias=True))],
        structured_content=model.model_dump(mode="json", by_alias=True),
    )


def refusal(text: str, details: dict[str, Any]) -> CallToolResult:
    """A tool error: `text` for the model, `details` for programs, in `_meta[ERROR_META_KEY]`."""
    return CallToolResult(
        is_error=True, content=[TextContent(type="text", text=text)], _meta={ERROR_META_KEY: details}
    )


def for_every_client(result: CallToolResult) -> CallToolResult:
    """`result` as every client can take it: an error result's structured content, if it has
    any, moves to `_meta[ERROR_META_KEY]` (its text already says what happened)."""
    if not result.is_error or result.structured_content is None:
        return result
    return CallToolResult(
        is_error=True,
        content=result.content,
        _meta={**(result.meta or {}), ERROR_META_KEY: result.structured_content},
    )


def stale_version(reason: Exception, noun: str, key: str, current: BaseModel) -> CallToolResult:
    """An update refused because the item changed since the caller read it: why, and the current
    version to retry from, in the text (and under `key` in `_meta[ERROR_META_KEY]`). Nothing was
    changed."""
    data = current.model_dump(mode="json")
    return refusal(f"{reason}. Current {noun}: {json.dumps(data)}", {"error": "conflict", key: data})
