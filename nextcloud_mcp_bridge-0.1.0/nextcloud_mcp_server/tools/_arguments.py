"""Tool arguments take only the keys they declare: an unknown one (`type` for `types`, `tittle`)
is refused with the known ones named, rather than ignored.

The SDK builds one pydantic model per tool from its signature, which ignores extra keys; `strict`
swaps it for a subclass that refuses them, for every tool at once (`server.build_server`).
Objects inside arguments are models of their own, based on `StrictArguments`.
"""

from __future__ import annotations

from typing import Any, cast

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BaseModel, ConfigDict, create_model, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["UNKNOWN_KEYS", "StrictArguments", "strict"]

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
    """Make `tool` refuse unknown top-level keys, and say so in its input schema."""
    loose = tool.fn_metadata.arg_model
    model = cast(
        type[ArgModelBase],
        create_model(loose.__name__, __base__=(loose, StrictArguments), __module__=loose.__module__),
    )
    tool.fn_metadata.arg_model = model
    tool.parameters = model.model_json_schema(by_alias=True)
