"""The README tells the truth and stays short: its commands, tables and Claude Desktop configuration
work, it names the project one way, and a person reads it in ten minutes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nextcloud_mcp_server import DISTRIBUTION
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.tools import all_tools
from nextcloud_mcp_server.tools.catalog import markdown_table
from tests.mcp_clients import structured

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
TOOLS_PAGE = (ROOT / "docs" / "tools.md").read_text()
# the other project on PyPI, named once on purpose so nobody installs it by mistake
OTHER_PROJECT = "pip install nextcloud-mcp-server"


def test_the_readme_is_at_most_300_lines() -> None:
    assert len(README.splitlines()) <= 300


def test_the_readme_names_the_project_one_way() -> None:
    """`nextcloud-mcp-server` appears only where the other project's package is named on purpose."""
    assert README.startswith(f"# {DISTRIBUTION}\n")
    assert README.count("nextcloud-mcp-server") == README.count(OTHER_PROJECT) == 1


def test_the_installing_path_has_no_measurements_rfcs_or_adrs() -> None:
    """Measurements live in docs/performance.md, protocol references and decisions in docs/."""
    prose = re.sub(r"```text\n.*?```", "", README, flags=re.S)  # `check`'s own output may say 41 ms
    assert not re.search(r"RFC \d|docs/ADR|ADR \d", prose)
    assert not re.search(r"\d+(\.\d+)? ?(ms|s|MiB|KiB|MB)\b|\d+x slower|measured", prose)


def test_the_tool_table_is_generated_from_the_registry() -> None:
    """Adding, renaming or re-scoping a tool without `make docs` fails here."""
    table = re.search(r"<!-- tools:start -->\n(.*?)\n<!-- tools:end -->", TOOLS_PAGE, flags=re.S)
    assert table is not None
    assert table.group(1) == markdown_table(all_tools())


def test_the_account_tools_are_named() -> None:
    from nextcloud_mcp_server.tools import account_tools

    for spec in account_tools():
        assert f"`{spec.name}`" in TOOLS_PAGE


def test_every_page_the_readme_links_exists() -> None:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), target


def test_every_anchor_the_readme_links_is_a_heading() -> None:
    headings = {
        re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.*)$", README, flags=re.M)
    }
    assert set(re.findall(r"\]\(#([^)]+)\)", README)) <= headings


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
    named = set(re.findall(r"`make ([a-z][a-z-]*)", README)) | set(
        re.findall(r"^make ([a-z][a-z-]*)", README, flags=re.M)
    )
    assert {"install", "mcpb", "demo", "check"} <= named
    assert named <= targets, named - targets


def test_the_three_required_settings_are_the_ones_the_readme_names() -> None:
    env_example = (ROOT / ".env.example").read_text()
    required = re.findall(r"^([A-Z][A-Z0-9_]+)=", env_example, flags=re.M)
    assert required == ["NEXTCLOUD_HOST", "NEXTCLOUD_USERNAME", "NEXTCLOUD_PASSWORD"]
    for name in required:
        assert f"| `{name}` |" in README
        assert name.lower() in Settings.model_fields


def test_the_sample_check_output_is_what_check_prints(server_env: dict[str, str], tmp_path: Path) -> None:
    """The README's `check` output has the lines, in order, that `check` prints for a working setup
    with the default settings (here against the double; only the figures differ)."""
    sample = re.search(r"```text\n(Nextcloud check for .*?)```", README, flags=re.S)
    assert sample is not None
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    done = subprocess.run(
        [sys.executable, "-m", "nextcloud_mcp_server", "check"],
        env={**base, **server_env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    def shape(text: str) -> list[str]:
        return [line[:24] for line in text.splitlines() if line.startswith("  [")]

    assert shape(sample.group(1)) == shape(done.stdout)
    settings_line = next(line for line in done.stdout.splitlines() if "] settings" in line)
    assert settings_line in sample.group(1)
    assert sample.group(1).splitlines()[-1] == done.stdout.splitlines()[-1] == "Result: ready"
