"""The README tells the truth: its commands, tool table and Claude Desktop configuration work."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nextcloud_mcp_server.tools import all_tools
from nextcloud_mcp_server.tools.catalog import markdown_table
from tests.mcp_clients import structured

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_first_commands_are_make_run_and_make_test() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, flags=re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands[:2] == ["make run", "make test"]


def test_the_tool_table_is_generated_from_the_registry() -> None:
    """Adding, renaming or re-scoping a tool without `make docs` fails here."""
    table = re.search(r"<!-- tools:start -->\n(.*?)\n<!-- tools:end -->", README, flags=re.S)
    assert table is not None
    assert table.group(1) == markdown_table(all_tools())


def test_the_account_tools_are_named() -> None:
    from nextcloud_mcp_server.tools import account_tools

    for spec in account_tools():
        assert f"`{spec.name}`" in README


def claude_desktop_config() -> dict[str, object]:
    block = next(b for b in re.findall(r"```json\n(.*?)```", README, flags=re.S) if "mcpServers" in b)
    return json.loads(block)  # type: ignore[no-any-return]


@pytest.mark.integration
async def test_the_documented_claude_desktop_configuration_works(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """The JSON from the README, with only the placeholders filled in, starts a working server."""
    server = claude_desktop_config()["mcpServers"]["nextcloud"]  # type: ignore[index]
    assert server["command"].endswith("/.venv/bin/nextcloud-mcp-bridge")
    assert set(server["env"]) == set(server_env)
    command = str(Path(sys.executable).parent / "nextcloud-mcp-bridge")
    params = StdioServerParameters(command=command, args=server["args"], env=server_env, cwd=tmp_path)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        created = structured(await session.call_tool("nc_notes_create_note", {"title": "From Claude"}))
        listed = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["id"] for n in listed["notes"]] == [created["id"]]


def test_the_name_clash_is_stated_before_the_quick_start() -> None:
    """Whoever reads only the top learns that `pip install nextcloud-mcp-server` is another project."""
    top = README.split("## Quick start", 1)[0]
    assert "another project" in top
    assert "`nextcloud-mcp-bridge`" in top


def test_every_make_target_the_readme_names_exists() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", README))
    assert {"install", "mcpb", "dist", "demo", "test"} <= named
    assert named <= targets, named - targets


def test_the_oauth_material_comes_after_the_tool_table() -> None:
    assert README.index("<!-- tools:end -->") < README.index("## Many users: OAuth")
