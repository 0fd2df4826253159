"""Output schemas that clients validate cheaply (docs/ADR/0029-plain-output-schemas.md).

pydantic describes a nested model as `{"$ref": "#/$defs/Model"}`. That is valid JSON Schema, but a
client that validates every result (the MCP Python SDK does, with `jsonschema`) resolves the
reference for each item of a list. `plain` rewrites a schema to one that accepts exactly the same
instances:

- a `$defs` entry referenced once, and not from inside itself, is put in place of its reference;
- the titles pydantic makes up (`"Id"` for `id`, the class name for a model) are dropped
  (`untitled`, also applied to input schemas): they carry nothing the property names do not, cost
  the client a keyword per node it validates and the model tokens in every `tools/list`.

An optional field stays as pydantic writes it, `{"anyOf": [{"type": "string"}, {"type": "null"}]}`:
a list of types (`"type": ["string", "null"]`) would validate a little faster in `jsonschema`, but
it is the form schema linters flag as unportable (the MCP Inspector's `--strict` mode warned 84
times, issue 33), and a schema should validate the same in every client.

`without_defaults` drops `default`s that tell a client nothing (docs/ADR/0042-toolsets-by-app.md):
in an output schema every one (a default is an annotation; the server writes every field of a
result), in an input schema `"default": null` (an optional argument is one not `required`). Other
input defaults (`limit` 200) stay: they tell the model what leaving an argument out means.

Only schema keywords are walked: the contents of `enum`, `const`, `default` and `examples` are
values, never rewritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["plain", "published_input", "published_output", "untitled", "without_defaults"]

_PREFIX = "#/$defs/"
# keywords whose value is a schema, a list of schemas, or a map of name -> schema
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs")


def plain(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with single-use definitions inlined and without made-up titles."""
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
        return out

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


def published_output(schema: dict[str, Any]) -> dict[str, Any]:
    """The output schema `tools/list` shows and clients validate results against."""
    return without_defaults(plain(schema), output=True)


def published_input(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema `tools/list` shows (arguments are validated by the signature's model)."""
    return without_defaults(untitled(schema), output=False)


def without_defaults(schema: dict[str, Any], *, output: bool) -> dict[str, Any]:
    """`schema` without its `default`s (`output`) or without `"default": null` (input)."""

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        kept = {k: v for k, v in node.items() if not (k == "default" and (output or v is None))}
        return _with_subschemas(kept, walk)

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
