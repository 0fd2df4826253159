"""Answers a tool builds by hand when its return annotation cannot say everything: a model with
its JSON text, and the refusal of an update made against an old version."""

from __future__ import annotations

import json

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

__all__ = ["answer", "stale_version"]


def answer(model: BaseModel) -> CallToolResult:
    """`model` as structured content, and the same as compact JSON text for clients that read
    only text (the SDK's own text for a returned model is indented: about 40% more characters
    for the model to read in a listing, and more bytes to send)."""
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json(by_alias=True))],
        structured_content=model.model_dump(mode="json", by_alias=True),
    )


def stale_version(refusal: Exception, noun: str, key: str, current: BaseModel) -> CallToolResult:
    """An update refused because the item changed since the caller read it: why, and the current
    version (under `key` in the structured content) to retry from. Nothing was changed."""
    data = current.model_dump()
    return CallToolResult(
        is_error=True,
        content=[TextContent(type="text", text=f"{refusal}. Current {noun}: {json.dumps(data)}")],
        structured_content={"error": "conflict", key: data},
    )
