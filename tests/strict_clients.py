"""What a strict MCP client accepts as a tool result, for tests that use the Python SDK's client.

The TypeScript SDK's client (1.32.2, what most MCP hosts are built on) checks every result of a
tool that has an output schema, error or not: structured content, when there is any, must match
the schema (Ajv with formats), else `callTool` throws -32602 and the result never reaches the
model; a result that is not an error must carry structured content. The Python SDK's client
checks successful results only, so the tests check what it lets through by the stricter rule.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from mcp.types import CallToolResult

from nextcloud_mcp_server.tools._results import ERROR_META_KEY

__all__ = ["refusal_details", "strict_problem", "text_of"]


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def strict_problem(output_schema: dict[str, Any] | None, result: CallToolResult) -> str | None:
    """Why a strict client would refuse `result` of a tool with `output_schema`, or None."""
    if output_schema is None:
        return None
    if result.structured_content is None:
        return None if result.is_error else "no structured content in a result that is not an error"
    validator = Draft202012Validator(output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(result.structured_content), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(part) for part in errors[0].path) or "(top)"
        return f"structured content does not match the output schema at {where}: {errors[0].message}"
    return None


def refusal_details(result: CallToolResult) -> dict[str, Any]:
    """The machine-readable details of an error result (`_meta`), which carries no structured
    content (fails loudly otherwise)."""
    assert result.is_error, result.content
    assert result.structured_content is None, result.structured_content
    details: dict[str, Any] = (result.meta or {})[ERROR_META_KEY]
    return details
