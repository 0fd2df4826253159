"""`make mcpb`: the Claude Desktop extension, run the way Claude Desktop runs it: unpacked, the
manifest's command started with the user's settings substituted, driven by an MCP client."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.server import SETUP_TOOL
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from nextcloud_mcp_server.toolsets import declarations
from tests.backends import Nextcloud
from tests.mcp_clients import structured
from tests.packaging.conftest import ROOT, run, tool_env

pytestmark = pytest.mark.integration

MCPB = ROOT / "packaging" / "mcpb" / "node_modules" / ".bin" / "mcpb"


def unpack(bundle: Path, into: Path) -> dict[str, Any]:
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(into)
    manifest: dict[str, Any] = json.loads((into / "manifest.json").read_text())
    return manifest


def substitute(value: str, folder: Path, user: dict[str, Any]) -> str:
    """${__dirname} and ${user_config.x} as the host fills them in (booleans as true/false)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "__dirname":
            return str(folder)
        found = user[name.removeprefix("user_config.")]
        return json.dumps(found) if isinstance(found, bool) else str(found)

    return re.sub(r"\$\{([^}]+)\}", one, value)


def user_settings(manifest: dict[str, Any], **given: Any) -> dict[str, Any]:
    """The form's answers: what the user typed, defaults for the rest; required ones must be given."""
    answers = {}
    for name, option in manifest["user_config"].items():
        if name in given:
            answers[name] = given[name]
        else:
            assert not option.get("required"), f"{name} is required"
            answers[name] = option.get("default", "")
    return answers


@pytest.fixture(scope="module")
def extension(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The bundle unpacked once per worker, as Claude Desktop keeps it installed: the first start
    has uv install the pinned dependencies into it (4-5 s), later starts reuse them, as the
    host's do; each test still starts the server afresh with its own settings."""
    folder = tmp_path_factory.mktemp("extension")
    return folder, unpack(bundle, folder)


def test_the_manifest_asks_for_what_the_server_needs(bundle: Path, tmp_path: Path) -> None:
    """URL, login name and app password (sensitive) are required; permission level and
    confirmation are optional with the server's defaults; `mcpb validate` accepts the manifest."""
    manifest = unpack(bundle, tmp_path)
    assert manifest["manifest_version"] == "0.4"
    assert (manifest["name"], manifest["version"]) == ("nextcloud-mcp-bridge", __version__)
    config = manifest["user_config"]
    assert {name for name, o in config.items() if o.get("required")} == {
        "nextcloud_url",
        "username",
        "app_password",
    }
    assert [name for name, o in config.items() if o.get("sensitive")] == ["app_password"]
    assert (config["permissions"]["default"], config["confirm_destructive"]["default"]) == (
        "destructive",
        True,
    )
    # the toolsets field names every toolset there is, and its default is the server's
    assert config["toolsets"]["default"] == "default"
    named = {spec.toolset for spec in all_tools()} - set(DEFAULT_TOOLSETS)
    assert all(f" {name}" in config["toolsets"]["description"] for name in named)
    assert manifest["server"]["mcp_config"]["env"]["NEXTCLOUD_MCP_TOOLSETS"] == "${user_config.toolsets}"
    assert manifest["server"]["type"] == "uv"
    assert (tmp_path / manifest["server"]["entry_point"]).is_file()
    done = run([str(MCPB), "validate", str(tmp_path / "manifest.json")])
    assert "passes" in done.stdout


def test_the_install_preview_shows_what_the_defaults_give_and_how_to_add_more(
    bundle: Path, tmp_path: Path
) -> None:
    """The tools listed are exactly those of the default toolsets (what a person gets without
    changing the form), the descriptions and keywords name the default toolsets, the long one says
    how to add the others (every app by name), and the icon is in the bundle as a PNG."""
    manifest = unpack(bundle, tmp_path)
    assert [t["name"] for t in manifest["tools"]] == [
        spec.name for spec in all_tools() if spec.toolset in DEFAULT_TOOLSETS
    ]
    assert len(manifest["tools"]) < len(all_tools())
    for name in DEFAULT_TOOLSETS:
        assert name in manifest["description"]
        assert name in manifest["keywords"]
    assert "Which parts of Nextcloud" in manifest["long_description"]
    for found in declarations():
        if found.chosen and not found.default and found.app is not None:
            assert found.app.name in manifest["long_description"], found.name
    icon = tmp_path / manifest["icon"]
    assert icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(icon.read_bytes()[16:20], "big") >= 256  # width: a crisp tile
    assert "author" in manifest
    assert "nextcloud-mcp-server" not in json.dumps(manifest)


def test_the_links_come_from_the_projects_urls() -> None:
    """homepage and support are pyproject.toml's [project.urls] Homepage and Issues, whenever it
    names them (one place says where the project lives); without them, no link is made up."""
    sys.path.insert(0, str(ROOT / "packaging" / "mcpb"))
    try:
        import build
    finally:
        sys.path.pop(0)
    named = '[project]\nname = "x"\n[project.urls]\nHomepage = "https://h.example/"\nIssues = "https://h.example/i"\n'
    assert build.links(named) == {"homepage": "https://h.example/", "support": "https://h.example/i"}
    assert build.links('[project]\nname = "x"\n') == {}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("permissions", ["", " Read "], ids=["default", "read-as-typed"])
async def test_the_unpacked_bundle_serves_the_nextcloud(
    extension: tuple[Path, dict[str, Any]], nextcloud: Nextcloud, tmp_path: Path, permissions: str
) -> None:
    """Started from manifest.json exactly as Claude Desktop starts it (uv installs the pinned
    dependencies on first start), the extension works against the Nextcloud under test; with
    `read` (typed into the form's free text as ` Read `), writing tools are not offered."""
    folder, manifest = extension
    answers = user_settings(
        manifest,
        nextcloud_url=nextcloud.url,
        username=nextcloud.admin.user,
        app_password=nextcloud.admin.app_password,
        permissions=permissions,
    )
    config = manifest["server"]["mcp_config"]
    params = StdioServerParameters(
        command=substitute(config["command"], folder, answers),
        args=[substitute(a, folder, answers) for a in config["args"]],
        env={**tool_env(), **{k: substitute(v, folder, answers) for k, v in config["env"].items()}},
        cwd=tmp_path,
    )
    nextcloud.add_note(title="Seen by the extension", content="hello")
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            listed = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in listed["notes"]] == ["Seen by the extension"]
    read_only = permissions.strip().lower() == "read"
    assert ("nc_notes_create_note" in names) is not read_only
    assert ("nc_notes_delete_note" in names) is not read_only
    assert nextcloud.admin.app_password not in (tmp_path / "stderr.log").read_text()


@pytest.mark.timeout(600)
async def test_a_wrong_setting_in_the_form_is_explained_in_the_conversation(
    extension: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A permission level typed wrong does not end the extension (Claude Desktop would show only
    "Server disconnected", the reason in a log): it answers `initialize`, and its one tool and its
    instructions name the setting and where to fix it (docs/ADR/0066); the log has the same line;
    the app password is not echoed anywhere."""
    folder, manifest = extension
    answers = user_settings(
        manifest,
        nextcloud_url="https://cloud.example.com",
        username="alice",
        app_password="Secret-App-Password-0001",
        permissions="admin",
    )
    config = manifest["server"]["mcp_config"]
    params = StdioServerParameters(
        command=substitute(config["command"], folder, answers),
        args=[substitute(a, folder, answers) for a in config["args"]],
        env={**tool_env(), **{k: substitute(v, folder, answers) for k, v in config["env"].items()}},
        cwd=tmp_path,
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            started = await session.initialize()
            tools = (await session.list_tools()).tools
            called = await session.call_tool(SETUP_TOOL, {})
    said = "".join(getattr(block, "text", "") for block in called.content)
    assert [tool.name for tool in tools] == [SETUP_TOOL]
    assert called.is_error
    for where in (said, started.instructions or "", tools[0].description or ""):
        assert "NEXTCLOUD_MCP_PERMISSIONS must be one of" in where
        assert "Settings > Extensions > Nextcloud" in where
    log = (tmp_path / "stderr.log").read_text()
    assert "NEXTCLOUD_MCP_PERMISSIONS must be one of" in log
    assert "Secret-App-Password-0001" not in log + said + (started.instructions or "")
