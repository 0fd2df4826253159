"""`check` and `run` agree on every configuration (docs/ADR/0066): what one refuses the other refuses
with the same words, what one accepts the other serves; the Claude Desktop extension's server
explains a refused configuration inside the conversation; `check` says per app toolset whether the
app is enabled for the user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nextcloud_mcp_server.server import SETUP_TOOL
from nextcloud_mcp_server.toolsets import declarations
from tests.backends import Nextcloud

BASE = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}
# a name no toolset will take; the known ones as the registry lists them (a new toolset joins
# without changing this test)
NOT_A_TOOLSET = "recipes-of-grandma"
UNKNOWN = f"NEXTCLOUD_MCP_TOOLSETS: unknown toolset {NOT_A_TOOLSET!r}; known: " + ", ".join(
    ["default", "all", *(found.name for found in declarations() if found.chosen)]
)
NO_PASSWORD = "NEXTCLOUD_PASSWORD (or NEXTCLOUD_PASSWORD_FILE) is required"
NO_USER = "NEXTCLOUD_USERNAME is required: your Nextcloud login name"

# (what, settings over the working ones (None: unset), the problems both must name, in order,
#  or None when both accept it and a tool run must offer)
TABLE: list[tuple[str, dict[str, str | None], list[str] | None, str]] = [
    ("the default", {}, None, "nc_notes_list_notes"),
    ("all toolsets", {"NEXTCLOUD_MCP_TOOLSETS": "all"}, None, "nc_deck_list_boards"),
    (
        "typed into a form",
        {"NEXTCLOUD_MCP_TOOLSETS": " Default , Deck ", "NEXTCLOUD_MCP_PERMISSIONS": " Read"},
        None,
        "nc_deck_list_boards",
    ),
    ("an empty list", {"NEXTCLOUD_MCP_TOOLSETS": " , "}, None, "nc_calendar_list_events"),
    ("an unknown toolset", {"NEXTCLOUD_MCP_TOOLSETS": f"default,{NOT_A_TOOLSET}"}, [UNKNOWN], ""),
    ("no password", {"NEXTCLOUD_PASSWORD": None}, [NO_PASSWORD], ""),
    (
        "two problems at once",
        {"NEXTCLOUD_USERNAME": None, "NEXTCLOUD_MCP_TOOLSETS": f"{NOT_A_TOOLSET},default"},
        [NO_USER, UNKNOWN],
        "",
    ),
    (
        "a level that does not exist",
        {"NEXTCLOUD_MCP_PERMISSIONS": "admin"},
        ["NEXTCLOUD_MCP_PERMISSIONS"],
        "",
    ),
    (
        "OAuth without its public address",
        {"OIDC_ISSUER": "https://id.example.com", "NEXTCLOUD_USERNAME": None, "NEXTCLOUD_PASSWORD": None},
        ["MCP_PUBLIC_URL is required with OIDC_ISSUER"],
        "",
    ),
]


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _env(working: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    env = {**BASE, **working}
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _command(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nextcloud_mcp_server", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def _session_tools(env: dict[str, str], cwd: Path, *args: str) -> tuple[str, list[str], Any]:
    """instructions, tool names and the first tool's call result of `run` over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "nextcloud_mcp_server", *args], env=env, cwd=cwd
    )
    with open(cwd / "stderr.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            started = await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            called = await session.call_tool(tools[0], {}) if tools == [SETUP_TOOL] else None
    return started.instructions or "", tools, called


@pytest.mark.parametrize(("what", "changes", "problems", "offered"), TABLE, ids=[row[0] for row in TABLE])
async def test_check_and_run_agree(
    what: str,
    changes: dict[str, str | None],
    problems: list[str] | None,
    offered: str,
    server_env: dict[str, str],
    tmp_path: Path,
) -> None:
    env = _env(server_env, changes)
    checked = _command("check", env=env, cwd=tmp_path)
    if problems is None:
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "Result: ready" in checked.stdout
        _, tools, _ = await _session_tools(env, tmp_path, "run")
        assert offered in tools
        return
    ran = _command("run", env=env, cwd=tmp_path)
    assert (checked.returncode, ran.returncode) == (2, 2), checked.stdout + ran.stderr
    assert checked.stderr == ran.stderr
    lines = checked.stderr.splitlines()
    assert len(lines) == len(problems)
    for line, problem in zip(lines, problems, strict=True):
        assert line.startswith(f"nextcloud-mcp-bridge: {problem}"), line
    # the extension's server: the same words inside the conversation, and no Nextcloud tool
    instructions, tools, called = await _session_tools(env, tmp_path, "run", "--serve-config-errors")
    assert tools == [SETUP_TOOL]
    assert called is not None
    assert called.is_error
    for line in lines:
        said = line.removeprefix("nextcloud-mcp-bridge: ")
        assert said in instructions
        assert said in text_of(called)
    assert "Settings > Extensions > Nextcloud" in text_of(called)


async def test_check_says_per_app_toolset_whether_the_app_is_enabled(
    apps_nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """On a real Nextcloud with Deck, Talk, Tables and Collectives, each chosen app toolset is
    reported enabled; the core apps' toolsets too."""
    env = _env(apps_nextcloud.server_env(), {"NEXTCLOUD_MCP_TOOLSETS": "default,deck,talk,tables,trash"})
    checked = _command("check", env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for name, app in (("deck", "Deck"), ("talk", "Talk"), ("tables", "Tables"), ("trash", "Deleted files")):
        assert f"[ ok ] {name} toolset" in checked.stdout, checked.stdout
        assert f"{app} is enabled for you" in checked.stdout
    assert (
        "toolsets notes, calendar, files, contacts, sharing, search, talk, trash, deck, tables"
        in checked.stdout
    )


async def test_check_says_what_to_do_when_an_app_is_missing(nextcloud: Nextcloud, tmp_path: Path) -> None:
    """Without Deck (the plain real Nextclouds), `check` warns, names the app and what to do, and
    the configuration is still ready: `run` serves it, without Deck's tools for this user. The double
    does not say which apps it has, so `check` says it could not ask."""
    env = _env(nextcloud.server_env(), {"NEXTCLOUD_MCP_TOOLSETS": "default,deck"})
    checked = _command("check", env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Result: ready (1 warning(s))" in checked.stdout, checked.stdout
    if nextcloud.kind == "double":
        assert "[warn] apps           could not ask which apps are enabled" in checked.stdout
        return
    assert "[warn] deck toolset" in checked.stdout
    assert "occ app:enable deck" in checked.stdout
    assert "leave 'deck' out of NEXTCLOUD_MCP_TOOLSETS" in checked.stdout
    _, tools, _ = await _session_tools(env, tmp_path, "run")
    assert "nc_notes_list_notes" in tools
    assert not any(name.startswith("nc_deck_") for name in tools)
