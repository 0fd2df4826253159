"""Careless input (issue 13, item 7, the tool parts), as a new user types it: each answer says
what is wrong in one readable line, and nothing is changed. ADR 0019."""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.targets import ON_THE_DOUBLE, cases

pytestmark = pytest.mark.integration

RLO = "\u202e"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _calls(nextcloud: Nextcloud, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            return [await session.call_tool(tool, args) for tool, args in calls]


async def test_reading_past_the_end_of_a_file_says_so(nextcloud: Nextcloud) -> None:
    nextcloud.put_file(nextcloud.admin, "a.txt", b"hello")
    past, at_end = await _calls(
        nextcloud,
        ("nc_webdav_read_file", {"path": "a.txt", "offset": 100}),
        ("nc_webdav_read_file", {"path": "a.txt", "offset": 5}),
    )
    for result, offset in ((past, 100), (at_end, 5)):
        assert result.is_error
        assert f"offset {offset} is beyond the end of /a.txt, which is 5 bytes (offsets 0 to 4)" in _text(
            result
        )


async def test_listing_a_file_as_a_folder_says_it_is_a_file(nextcloud: Nextcloud) -> None:
    nextcloud.put_file(nextcloud.admin, "a.txt", b"hello")
    [result] = await _calls(nextcloud, ("nc_webdav_list_directory", {"path": "a.txt"}))
    assert result.is_error
    assert "/a.txt is a file, not a folder; read it with nc_webdav_read_file" in _text(result)


@ON_THE_DOUBLE
async def test_schema_errors_are_one_readable_line_naming_the_argument(nextcloud: Nextcloud) -> None:
    huge, missing, wrong = await _calls(
        nextcloud,
        ("nc_notes_get_note", {"note_id": 2**64}),
        ("nc_notes_get_note", {}),
        ("nc_notes_get_note", {"note_id": "x" * 200_000}),
    )
    assert _text(huge) == (
        "Error executing tool nc_notes_get_note: invalid arguments: 'note_id': Input should be less "
        "than or equal to 9223372036854775807; nothing was done"
    )
    assert _text(missing) == (
        "Error executing tool nc_notes_get_note: invalid arguments: 'note_id' is required; nothing was done"
    )
    assert wrong.is_error
    assert "'note_id': Input should be a valid integer" in _text(wrong)
    for result in (huge, missing, wrong):
        assert result.is_error
        assert "\n" not in _text(result)
        assert "pydantic.dev" not in _text(result)
        assert len(_text(result)) < 400


async def test_a_title_nextcloud_changed_is_reported(nextcloud: Nextcloud) -> None:
    [result] = await _calls(nextcloud, ("nc_notes_create_note", {"title": "What? a/b", "content": "x"}))
    created = structured(result)
    [stored] = nextcloud.notes()
    assert created["title"] == stored["title"] != "What? a/b"
    assert created["notice"].startswith(f"Nextcloud stored the title as '{stored['title']}', not 'What? a/b'")
    [plain] = await _calls(nextcloud, ("nc_notes_create_note", {"title": "Plain", "content": "x"}))
    assert structured(plain)["notice"] is None


HIDDEN_CHARACTERS = [
    ("nc_notes_create_note", {"title": f"invoice{RLO}fdp.exe", "content": "x"}, "title"),
    ("nc_notes_create_note", {"title": "ok", "category": f"Work{RLO}"}, "category"),
    ("nc_webdav_create_file", {"path": f"invoice{RLO}fdp.exe", "content": "x"}, "path"),
    ("nc_webdav_create_directory", {"path": "a\u200bb"}, "path"),
    ("nc_calendar_create_event", {"summary": f"Pay {RLO}1000", "start": "2026-11-23T10:00"}, "summary"),
    ("nc_calendar_create_todo", {"summary": "\u2066hidden\u2069"}, "summary"),
]


# refused as input before any request: every case on the double, one on the real ones
@cases("tool, args, what", HIDDEN_CHARACTERS, on_real=HIDDEN_CHARACTERS[:1])
async def test_text_direction_and_invisible_characters_are_refused_in_names(
    nextcloud: Nextcloud, tool: str, args: dict[str, Any], what: str
) -> None:
    [result] = await _calls(nextcloud, (tool, args))
    assert result.is_error
    assert f"{what} contains the invisible or text-direction character U+" in _text(result)
    assert nextcloud.notes() == []
    assert nextcloud.calendar_objects(nextcloud.admin) == {}
    assert not nextcloud.exists(nextcloud.admin, args.get("path", "-"))


async def test_emoji_with_joiners_are_still_fine(nextcloud: Nextcloud) -> None:
    family = "Family \U0001f468\u200d\U0001f469\u200d\U0001f467"
    [result] = await _calls(nextcloud, ("nc_notes_create_note", {"title": family, "content": "x"}))
    assert structured(result)["title"] == family


async def test_a_huge_search_query_is_refused_and_never_echoed(nextcloud: Nextcloud) -> None:
    nextcloud.add_note(title="Soup", content="lentils " * 3)
    huge, long = await _calls(
        nextcloud,
        ("nc_notes_search_notes", {"query": "lentils " * 25_000}),
        ("nc_notes_search_notes", {"query": "lentils " * 20}),
    )
    assert huge.is_error
    assert "'query': String should have at most 500 characters" in _text(huge)
    assert len(_text(huge)) < 400
    found = structured(long)
    assert found["query"] == ("lentils " * 20)[:80] + "…"
    assert len(found["hits"]) == 1


@ON_THE_DOUBLE
async def test_an_unknown_key_is_refused_naming_the_known_ones_and_nothing_is_written(
    nextcloud: Nextcloud,
) -> None:
    """`type` for `types` inside an object, `contnet` for `content` at the top level (issue 33):
    once ignored silently, so the type or the content was lost; now refused, with the keys that
    exist, before anything is written."""
    nested, top = await _calls(
        nextcloud,
        (
            "nc_contacts_create_contact",
            {"full_name": "Kim Lee", "emails": [{"value": "kim@example.org", "type": ["work"]}]},
        ),
        ("nc_notes_create_note", {"title": "Shopping", "contnet": "milk"}),
    )
    assert _text(nested) == (
        "Error executing tool nc_contacts_create_contact: invalid arguments: 'emails.0': unknown key "
        "'type'; the known ones are: types, value; nothing was done"
    )
    assert _text(top) == (
        "Error executing tool nc_notes_create_note: invalid arguments: unknown key 'contnet'; the "
        "known ones are: category, content, title; nothing was done"
    )
    assert nested.is_error
    assert top.is_error
    assert nextcloud.notes() == []
    [search] = await _calls(nextcloud, ("nc_contacts_search", {"query": "Kim"}))
    assert structured(search)["contacts"] == []


@ON_THE_DOUBLE
async def test_every_object_in_every_input_schema_refuses_keys_it_does_not_declare(
    nextcloud: Nextcloud,
) -> None:
    """What tools/list shows says so too: `additionalProperties: false` on the arguments and on
    every object inside them, for every tool a client can see (a map, such as the search's
    cursors by provider, declares the type of its values instead)."""
    with running_app(nextcloud.settings(nextcloud_mcp_toolsets="all")) as base:
        async with http_session(f"{base}/mcp") as session:
            tools = (await session.list_tools()).tools
    open_objects = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("additionalProperties", True) is True:
                open_objects.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    for tool in tools:
        walk(tool.input_schema, tool.name)
    assert len(tools) > 30
    assert open_objects == []
