"""Output schemas that clients validate cheaply (docs/ADR/0029-plain-output-schemas.md).

pydantic describes a nested model as `{"$ref": "#/$defs/Model"}` and an optional field as
`{"anyOf": [{"type": "string"}, {"type": "null"}]}`. Both are valid JSON Schema, but a client that
validates every result (the MCP Python SDK does, with `jsonschema`) resolves the reference for
each item of a list and tries each branch of the `anyOf` for each optional field. `plain` rewrites
a schema to one that accepts exactly the same instances:

- a `$defs` entry referenced once, and not from inside itself, is put in place of its reference;
- `anyOf` of one typed schema and `{"type": "null"}` becomes a list of types (`"type": ["string",
  "null"]`), with `null` added to an `enum` if there is one;
- the titles pydantic makes up (`"Id"` for `id`, the class name for a model) are dropped
  (`untitled`, also applied to input schemas): they carry nothing the property names do not, cost
  the client a keyword per node it validates and the model tokens in every `tools/list`.

Only schema keywords are walked: the contents of `enum`, `const`, `default` and `examples` are
values, never rewritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["plain", "untitled"]

_PREFIX = "#/$defs/"
_NULL = {"type": "null"}
# keywords whose value is a schema, a list of schemas, or a map of name -> schema
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs")
# keywords a nullable branch may carry besides `type` (none of them rejects null: they constrain
# only instances of another type; `enum` is handled by adding null to it)
_TYPE_ONLY = {
    "type",
    "enum",
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "title",
    "description",
}


def plain(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with single-use definitions inlined and nullable `anyOf`s as type lists."""
    defs: dict[str, Any] = schema.get("$defs", {})
    uses = Counter(_refs(schema))
    inline = {name for name in defs if uses[name] == 1 and name not in _refs(defs[name])}

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX) and ref[len(_PREFIX) :] in inline:
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**defs[ref[len(_PREFIX) :]], **siblings})
        own_defs = node.get("$defs")
        if isinstance(own_defs, dict):
            node = {**node, "$defs": {name: sub for name, sub in own_defs.items() if name not in inline}}
        out = _with_subschemas(node, walk)
        if out.get("$defs") == {}:
            del out["$defs"]
        return _nullable(out)

    result: dict[str, Any] = untitled(walk(schema))
    return result


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without `title` annotations (a property *named* title is kept: it is no keyword)."""

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        return _with_subschemas(
            {k: v for k, v in node.items() if not (k == "title" and isinstance(v, str))}, walk
        )

    result: dict[str, Any] = walk(schema)
    return result


def _with_subschemas(node: dict[str, Any], walk: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of `node` with `walk` applied to each schema it holds; values of other keywords
    (`enum`, `default`, ...) are copied as they are."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ONE and isinstance(value, dict):
            out[key] = walk(value)
        elif key in _MANY and isinstance(value, list):
            out[key] = [walk(item) for item in value]
        elif key in _MAP and isinstance(value, dict):
            out[key] = {name: walk(sub) for name, sub in value.items()}
        else:
            out[key] = value
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    branches = node.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and _NULL in branches):
        return node
    other = branches[0] if branches[1] == _NULL else branches[1]
    if not (isinstance(other, dict) and isinstance(other.get("type"), str) and set(other) <= _TYPE_ONLY):
        return node
    if (set(other) - {"title", "description"}) & set(node):
        return node  # the node constrains the same keyword itself: leave it as pydantic wrote it
    merged = {k: v for k, v in node.items() if k != "anyOf"}
    for key, value in other.items():
        if key in ("title", "description") and key in merged:
            continue  # the field's own words win over its type's
        merged[key] = value
    merged["type"] = [other["type"], "null"]
    if "enum" in merged and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    return merged


def _refs(node: Any) -> Iterator[str]:
    """Names of the definitions `node` refers to, once per reference, through schema keywords only."""
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        yield ref[len(_PREFIX) :]
    for key, value in node.items():
        if key in _ONE:
            yield from _refs(value)
        elif key in _MANY and isinstance(value, list):
            for item in value:
                yield from _refs(item)
        elif key in _MAP and isinstance(value, dict):
            for sub in value.values():
                yield from _refs(sub)
