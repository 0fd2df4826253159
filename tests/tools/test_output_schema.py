"""Plain output schemas accept exactly what pydantic's schemas accept, and clients validate them
without single-use references, in the form every validator takes (docs/ADR/0029-plain-output-schemas.md)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator
from mcp.server.mcpserver.tools import Tool

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_server
from nextcloud_mcp_server.tools import account_tools, all_tools
from nextcloud_mcp_server.tools._output_schema import plain, published_input, published_output, untitled


def pydantic_schemas() -> dict[str, dict[str, Any]]:
    schemas = {}
    for spec in all_tools() + account_tools():
        schema = Tool.from_function(spec.fn, name=spec.name).output_schema
        if schema is not None:
            schemas[spec.name] = schema
    return schemas


SCHEMAS = pydantic_schemas()


def instance(schema: dict[str, Any], defs: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A random instance that mostly fits `schema` (pydantic's form, with its references)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[1]], defs, rng, depth)
    if "anyOf" in schema:
        return instance(rng.choice(schema["anyOf"]), defs, rng, depth)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type", rng.choice(["string", "integer", "object"]))
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return {
            name: instance(sub, defs, rng, depth + 1)
            for name, sub in properties.items()
            if name in required or rng.random() < 0.7
        }
    if kind == "array":
        return [instance(schema.get("items", {}), defs, rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        "string": lambda: rng.choice(["", "x", "2026-11-24T10:00:00Z"]),
        "integer": lambda: rng.randint(-2, 5),
        "number": lambda: rng.random(),
        "boolean": lambda: rng.random() < 0.5,
        "null": lambda: None,
    }[kind]()


def mutated(value: Any, rng: random.Random) -> Any:
    """`value` with one node replaced by a value of another JSON type, or a required key dropped."""
    if isinstance(value, dict) and value and rng.random() < 0.6:
        key = rng.choice(sorted(value))
        copy = dict(value)
        if rng.random() < 0.2:
            del copy[key]
        else:
            copy[key] = mutated(copy[key], rng)
        return copy
    if isinstance(value, list) and value and rng.random() < 0.6:
        index = rng.randrange(len(value))
        return [*value[:index], mutated(value[index], rng), *value[index + 1 :]]
    return rng.choice([None, 0, 1.5, "s", True, [], {}, [None], {"x": None}])


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_plain_schema_accepts_exactly_what_pydantic_s_schema_accepts(name: str) -> None:
    original = SCHEMAS[name]
    simple = plain(original)
    Draft202012Validator.check_schema(simple)
    before, after = Draft202012Validator(original), Draft202012Validator(simple)
    rng = random.Random(name)
    valid = invalid = 0
    for _ in range(300):
        value = instance(original, original.get("$defs", {}), rng)
        for candidate in (value, mutated(value, rng), mutated(mutated(value, rng), rng)):
            verdict = before.is_valid(candidate)
            assert after.is_valid(candidate) is verdict, json.dumps(candidate)[:500]
            valid, invalid = valid + verdict, invalid + (not verdict)
    assert valid > 100  # both sides of the boundary were tried
    assert invalid > 100


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_plain_schemas_keep_no_single_use_reference(name: str) -> None:
    simple = json.dumps(plain(SCHEMAS[name]))
    for definition in plain(SCHEMAS[name]).get("$defs", {}):
        assert simple.count(f'"#/$defs/{definition}"') > 1  # kept only where it is shared


def test_rewrites_and_what_is_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {
                "anyOf": [{"enum": ["file", "directory"], "type": "string"}, {"type": "null"}],
                "default": None,
                "description": "the field's own words",
            },
            "size": {"anyOf": [{"type": "integer", "description": "the type's words"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "shared_a": {"$ref": "#/$defs/Shared"},
            "shared_b": {"$ref": "#/$defs/Shared"},
            "once": {"$ref": "#/$defs/Once", "description": "overrides"},
            "tree": {"$ref": "#/$defs/Tree"},
            "value": {"type": "object", "default": {"$ref": "#/$defs/Once", "anyOf": [{"type": "null"}]}},
        },
        "$defs": {
            "Shared": {"type": "string"},
            "Once": {
                "type": "object",
                "description": "Once's words",
                "properties": {"n": {"type": "integer"}},
            },
            "Tree": {"type": "object", "properties": {"children": {"items": {"$ref": "#/$defs/Tree"}}}},
        },
    }
    simple = plain(schema)
    properties = simple["properties"]
    assert properties["kind"] == schema["properties"]["kind"]  # a nullable stays an anyOf (issue 33)
    assert properties["size"] == schema["properties"]["size"]
    assert properties["either"] == schema["properties"]["either"]  # not a nullable: unchanged
    assert properties["shared_a"] == {"$ref": "#/$defs/Shared"}  # used twice: stays shared
    assert properties["once"] == {
        "type": "object",
        "description": "overrides",
        "properties": {"n": {"type": "integer"}},
    }
    assert properties["tree"] == {"$ref": "#/$defs/Tree"}  # refers to itself: stays
    assert properties["value"] == schema["properties"]["value"]  # a default is a value, not a schema
    assert set(simple["$defs"]) == {"Shared", "Tree"}
    assert schema["$defs"]["Once"]["description"] == "Once's words"  # the input is not modified


def test_titles_pydantic_makes_up_are_dropped_and_a_property_named_title_is_kept() -> None:
    schema = {
        "title": "NoteList",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "notes": {"title": "Notes", "type": "array", "items": {"title": "Note", "type": "object"}},
            "size": {"anyOf": [{"type": "integer", "title": "Size"}, {"type": "null"}], "title": "Size"},
            "kind": {"enum": ["title"], "default": {"title": "a value, not a schema"}},
        },
        "$defs": {"Shared": {"title": "Shared", "type": "string"}},
    }
    expected = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "notes": {"type": "array", "items": {"type": "object"}},
            "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "kind": {"enum": ["title"], "default": {"title": "a value, not a schema"}},
        },
        "$defs": {"Shared": {"type": "string"}},
    }
    assert untitled(schema) == expected
    assert plain(schema) == expected
    assert schema["properties"]["title"] == {"title": "Title", "type": "string"}  # the input is not modified


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_published_output_schemas_have_no_titles(name: str) -> None:
    assert '"title": "' not in json.dumps(plain(SCHEMAS[name]))


def _type_lists(node: Any, where: str = "") -> Iterator[str]:
    """Where a `"type"` holds a list of types, anywhere in `node`."""
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            yield where or "/"
        for key, value in node.items():
            yield from _type_lists(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _type_lists(value, f"{where}/{index}")


@pytest.mark.parametrize("offline", [False, True], ids=["single-user", "offline-access"])
async def test_no_schema_in_tools_list_has_a_list_of_types(offline: bool) -> None:
    """`"type": ["string", "null"]` is what schema linters flag as unportable (the Inspector's
    `--strict` mode, issue 33): every input and output schema `tools/list` shows uses `anyOf`."""
    settings = Settings(
        nextcloud_host="https://cloud.example.com",
        **(
            {
                "oidc_issuer": "https://id.example.com",
                "mcp_public_url": "https://mcp.example.com/mcp",
                "mcp_allowed_hosts": "mcp.example.com",
                "enable_offline_access": True,
            }
            if offline
            else {}
        ),
    )
    tools = await build_server(settings, cast(Runtime, None)).list_tools()
    assert len(tools) >= 40
    found = [
        f"{tool.name} {kind}schema {where}"
        for tool in tools
        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema))
        for where in _type_lists(schema)
    ]
    assert found == []
    assert any('"anyOf"' in json.dumps(tool.output_schema) for tool in tools)


def test_defaults_that_tell_nothing_are_dropped_and_values_are_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "calendar": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "limit": {"type": "integer", "default": 200},
            "kind": {"enum": ["default"], "const": {"default": None}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"x": {"default": False}}}},
        },
    }
    shown = published_input(schema)["properties"]
    assert shown["calendar"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert shown["limit"] == {"type": "integer", "default": 200}  # says what leaving it out means
    assert shown["kind"] == schema["properties"]["kind"]  # a value, not a schema
    assert shown["items"]["items"]["properties"]["x"] == {"default": False}
    validated = published_output(schema)["properties"]
    assert validated["limit"] == {"type": "integer"}
    assert validated["items"]["items"]["properties"]["x"] == {}
    assert validated["kind"] == schema["properties"]["kind"]
    assert schema["properties"]["limit"]["default"] == 200  # the input is not modified


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_published_output_schemas_accept_what_pydantic_accepts(name: str) -> None:
    """Dropping defaults changes no verdict: the same random instances pass and fail."""
    schema = SCHEMAS[name]
    rng = random.Random(name)
    theirs, ours = Draft202012Validator(schema), Draft202012Validator(published_output(schema))
    for _ in range(50):
        candidate = instance(schema, schema.get("$defs", {}), rng)
        assert theirs.is_valid(candidate) == ours.is_valid(candidate)
