"""Tool arguments take only the keys they declare: an unknown one (`type` for `types`, `tittle`)
is refused with the known ones named, rather than ignored.

The SDK builds one pydantic model per tool from its signature, which ignores extra keys; `strict`
swaps it for a subclass that refuses them, for every tool at once (`server.build_server`).
Objects inside arguments are models of their own, based on `StrictArguments`.
"""

from __future__ import annotations

from typing import Any, cast

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, ConfigDict, create_model, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["UNKNOWN_KEYS", "StrictArguments", "strict", "strict_model"]

UNKNOWN_KEYS = "unknown_keys"  # the pydantic error type of a refused key


class StrictArguments(BaseModel):
    """A model of arguments that refuses keys it does not declare, naming the ones it does."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = sorted(field.alias or name for name, field in cls.model_fields.items())
            unknown = sorted(str(key) for key in data if key not in known)
            if unknown:
                raise PydanticCustomError(
                    UNKNOWN_KEYS,
                    "unknown {noun} {unknown}; the known ones are: {known}",
                    {
                        "noun": "key" if len(unknown) == 1 else "keys",
                        "unknown": ", ".join(f"'{key[:40]}'" for key in unknown[:5]),
                        "known": ", ".join(known) or "none",
                    },
                )
        return data


def strict(tool: Tool) -> None:
    """Make `tool` refuse unknown top-level keys, and say so in its input schema. The strict
    model is built at the tool's first call: at start only the schema changes (one key), so a
    process that lists tools never builds 40 more models (start-up cost, docs/ADR/0069)."""
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    meta = tool.fn_metadata
    tool.fn_metadata = _StrictOnFirstUse(
        arg_model=meta.arg_model,
        output_schema=meta.output_schema,
        output_model=meta.output_model,
        wrap_output=meta.wrap_output,
    )


def strict_model(loose: type[ArgModelBase]) -> type[ArgModelBase]:
    """The SDK's arguments model of a tool, refusing keys it does not declare."""
    if issubclass(loose, StrictArguments):
        return loose
    return cast(
        type[ArgModelBase],
        create_model(loose.__name__, __base__=(loose, StrictArguments), __module__=loose.__module__),
    )


class _StrictOnFirstUse(FuncMetadata):
    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        self.arg_model = strict_model(self.arg_model)
        return super().validate_arguments(arguments_to_validate)
