"""The notes toolset end to end: a real MCP client, the real server, both Nextclouds (the double
and the real 29.0.6 with Notes 4.13.1).

Each scenario runs over stdio (the server spawned as Claude Desktop would) and over streamable
HTTP (uvicorn on a free port)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.config import Settings
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, stdio_session, structured
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

NOTES_TOOLS = {
    "nc_notes_list_notes": ("notes:read", True),
    "nc_notes_get_note": ("notes:read", True),
    "nc_notes_search_notes": ("notes:read", True),
    "nc_notes_create_note": ("notes:write", False),
    "nc_notes_update_note": ("notes:write", False),
    "nc_notes_append_content": ("notes:write", False),
    "nc_notes_delete_note": ("notes:write", False),
}


@asynccontextmanager
async def connect(
    transport: str, settings: Settings, env: dict[str, str], cwd: Path, human: Human | None = None
) -> AsyncIterator[ClientSession]:
    answer = {"elicitation_callback": human.answer} if human else {}
    if transport == "stdio":
        async with stdio_session(env, cwd=cwd, **answer) as session:
            yield session
    else:
        with running_app(settings) as base:
            async with http_session(f"{base}/mcp", **answer) as session:
                yield session


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_tools_list_shows_the_seven_notes_tools_with_scopes_and_annotations(
    transport: str, settings: Settings, server_env: dict[str, str], tmp_path: Path
) -> None:
    """tools/list names the notes tools users know, each with its scope and read-only hint."""
    async with connect(transport, settings, server_env, tmp_path) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    notes = {name: tool for name, tool in tools.items() if name.startswith("nc_notes_")}
    assert set(notes) == set(NOTES_TOOLS)
    for name, (scope, read_only) in NOTES_TOOLS.items():
        tool = notes[name]
        view = "ui://nextcloud/approval.html"  # the preview beside every approval (ADR 0041, 0077)
        linked = {"ui": {"resourceUri": view}, "ui/resourceUri": view}
        linked = linked if name in ("nc_notes_delete_note", "nc_notes_update_note") else {}
        assert tool.meta == {"nextcloud-mcp/scopes": [scope], **linked}
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is read_only
        assert tool.annotations.destructive_hint is (name == "nc_notes_delete_note")
        assert tool.description
        assert tool.input_schema["type"] == "object"
        # no made-up titles ("Note Id"): the property names say it, in fewer tokens
        assert '"title": "' not in json.dumps([tool.input_schema, tool.output_schema])


async def test_create_get_update_conflict_append_search_delete(
    transport: str, nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """A note's whole life through MCP, with the files in the user's WebDAV tree checked at each step."""

    def note_file() -> bytes | None:
        return nextcloud.read_file(nextcloud.admin, "Notes/Home/Groceries.md")

    human = Human()
    async with connect(transport, nextcloud.settings(), nextcloud.server_env(), tmp_path, human) as session:
        created = structured(
            await session.call_tool(
                "nc_notes_create_note", {"title": "Groceries", "content": "milk", "category": "Home"}
            )
        )
        assert note_file() == b"milk"
        note_id = created["id"]

        got = structured(await session.call_tool("nc_notes_get_note", {"note_id": note_id}))
        assert (got["title"], got["category"], got["content"]) == ("Groceries", "Home", "milk")
        assert got["etag"]

        updated = structured(
            await session.call_tool(
                "nc_notes_update_note", {"note_id": note_id, "etag": got["etag"], "content": "milk\neggs"}
            )
        )
        assert updated["content"] == "milk\neggs"
        assert updated["etag"] != got["etag"]
        assert note_file() == b"milk\neggs"

        stale = await session.call_tool(
            "nc_notes_update_note", {"note_id": note_id, "etag": got["etag"], "content": "overwrite!"}
        )
        conflict = refusal_details(stale)
        assert conflict["error"] == "conflict"
        assert conflict["current_note"]["content"] == "milk\neggs"
        assert conflict["current_note"]["etag"] == updated["etag"]
        assert "nothing was overwritten" in stale.content[0].text  # type: ignore[union-attr]
        assert note_file() == b"milk\neggs"

        appended = structured(
            await session.call_tool("nc_notes_append_content", {"note_id": note_id, "content": "bread"})
        )
        assert appended["content"] == "milk\neggs\nbread"

        structured(
            await session.call_tool("nc_notes_create_note", {"title": "Milk prices", "content": "rising"})
        )
        found = structured(await session.call_tool("nc_notes_search_notes", {"query": "MILK"}))
        assert [(h["title"], h["matched_in"]) for h in found["hits"]] == [
            ("Milk prices", "title"),
            ("Groceries", "content"),
        ]

        result = await session.call_tool("nc_notes_list_notes", {"category": "Home"})
        listed = structured(result)
        assert [n["title"] for n in listed["notes"]] == ["Groceries"]
        assert listed["total"] == 1
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed["notes"][0]["modified"])
        # the text a model reads is the same JSON, without indentation
        compact = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
        assert [block.text for block in result.content] == [compact]  # type: ignore[union-attr]

        deleted = structured(await session.call_tool("nc_notes_delete_note", {"note_id": note_id}))
        assert deleted == {"id": note_id, "title": "Groceries", "category": "Home", "deleted": True}
        assert note_file() is None
        [question] = human.questions
        assert question.startswith('Delete the note "Groceries" in category "Home", last changed 20')

        gone = await session.call_tool("nc_notes_get_note", {"note_id": note_id})
        assert gone.is_error
        assert f"note {note_id} does not exist" in gone.content[0].text  # type: ignore[union-attr]


async def test_a_renamed_and_moved_note_is_where_nextcloud_keeps_it(nextcloud: Nextcloud) -> None:
    """Changing title and category moves the note's file (Notes/<category>/<title>.md); a second
    note with a taken title gets the name Nextcloud gives it, and the tool reports that name."""
    admin = nextcloud.admin
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            first = structured(
                await session.call_tool(
                    "nc_notes_create_note", {"title": "Plan", "content": "a", "category": "Home"}
                )
            )
            moved = structured(
                await session.call_tool(
                    "nc_notes_update_note",
                    {"note_id": first["id"], "etag": first["etag"], "title": "Trip", "category": "Work"},
                )
            )
            second = structured(
                await session.call_tool(
                    "nc_notes_create_note", {"title": "Trip", "content": "b", "category": "Work"}
                )
            )
    assert (moved["title"], moved["category"], moved["content"]) == ("Trip", "Work", "a")
    assert nextcloud.read_file(admin, "Notes/Work/Trip.md") == b"a"
    assert not nextcloud.exists(admin, "Notes/Home/Plan.md")
    assert second["title"] == "Trip (2)"
    assert nextcloud.read_file(admin, "Notes/Work/Trip (2).md") == b"b"
    assert {(n["id"], n["title"]) for n in nextcloud.notes()} == {
        (first["id"], "Trip"),
        (second["id"], "Trip (2)"),
    }
