"""Icons (MCP 2025-11-25) on the server and on every tool, light and dark, as the SDK's client
receives them over stdio and over HTTP; and the SVG files themselves: small, static, harmless."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest
from mcp import ClientSession
from mcp.types import Icon

from nextcloud_mcp_server.icons import SERVER, TOOLSETS, icons_for
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, account_tools, all_tools
from nextcloud_mcp_server.tools._on_demand import CALL_TOOL, TOOLSETS_TOOL
from tests.mcp_clients import http_session, stdio_session

PACKAGE = Path(__file__).resolve().parents[1] / "nextcloud_mcp_server"
ALL_FILES = sorted([*(PACKAGE / "icons").glob("*.svg"), *(PACKAGE / "toolsets").glob("*/icons/*.svg")])


def icon_file(name: str, theme: str) -> Path:
    """The server's icons beside icons/__init__.py; a toolset's in its folder (docs/ADR/0052)."""
    if name == SERVER:
        return PACKAGE / "icons" / f"{name}-{theme}.svg"
    return PACKAGE / "toolsets" / name / "icons" / f"{theme}.svg"


SVG = "{http://www.w3.org/2000/svg}"
PREFIX = "data:image/svg+xml,"
SHAPES = {f"{SVG}svg", f"{SVG}path", f"{SVG}circle"}
ATTRIBUTES = {"viewBox", "fill", "stroke", "stroke-width", "d", "cx", "cy", "r"}
MAX_BYTES = 400  # each icon travels with every tool of its toolset in tools/list


def decoded(icon: Icon) -> str:
    assert icon.src.startswith(PREFIX), icon.src[:40]
    assert re.fullmatch(r"[A-Za-z0-9%/:=';,.()+\-]*", icon.src[len(PREFIX) :]), "not a plain URI"
    return unquote(icon.src[len(PREFIX) :])


def check_pair(icons: list[Icon] | None, name: str) -> None:
    """A light and a dark icon, each exactly the package's SVG file of that name."""
    assert icons is not None, name
    assert [icon.theme for icon in icons] == ["light", "dark"], name
    for icon in icons:
        assert decoded(icon) == icon_file(name, icon.theme).read_text().strip()


async def seen_by(session: ClientSession) -> None:
    info = session.server_info
    assert info is not None
    assert info.name == "nextcloud-mcp-bridge"  # the command people installed, not the PyPI namesake
    check_pair(info.icons, SERVER)
    toolset_of = {spec.name: spec.toolset for spec in all_tools() if spec.toolset in DEFAULT_TOOLSETS}
    toolset_of |= {TOOLSETS_TOOL: SERVER, CALL_TOOL: SERVER}  # they reach the other toolsets
    tools = (await session.list_tools()).tools
    assert len(tools) == len(toolset_of)
    for tool in tools:
        check_pair(tool.icons, toolset_of[tool.name])


async def test_icons_over_stdio(server_env: dict[str, str]) -> None:
    async with stdio_session(server_env) as session:
        await seen_by(session)
        templates = (await session.list_resource_templates()).resource_templates
        views = [r for r in (await session.list_resources()).resources if str(r.uri).startswith("ui://")]
    # resource templates show their toolset's icons, the views the calendar's and the server's
    shown = {t.uri_template.split("/")[2]: t.icons for t in templates}
    for part, toolset in (
        ("notes", "notes"),
        ("files", "files"),
        ("calendar", "calendar"),
        ("contacts", "contacts"),
    ):
        check_pair(shown[part], toolset)
    by_uri = {str(v.uri): v.icons for v in views}
    check_pair(by_uri["ui://nextcloud/agenda.html"], "calendar")
    check_pair(by_uri["ui://nextcloud/approval.html"], SERVER)


async def test_icons_over_http(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        await seen_by(session)


def test_every_toolset_has_its_own_icon() -> None:
    sets = {spec.toolset for spec in all_tools() + account_tools()}
    assert sets == set(TOOLSETS)
    assert all(spec.icons == icons_for(spec.toolset) for spec in all_tools() + account_tools())
    drawings = {decoded(icons_for(name)[0]) for name in (SERVER, *TOOLSETS)}
    assert len(drawings) == 1 + len(TOOLSETS)  # no two look the same
    assert icons_for("no-such-toolset") == ()
    assert len(ALL_FILES) == 2 * (1 + len(TOOLSETS))  # no stray icon file, none missing


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_an_icon_is_a_small_static_drawing(path: Path) -> None:
    """Only shapes: no script, no event handler, no link or outside reference, no entity, no
    style sheet; a view box to scale it; a few hundred bytes."""
    text = path.read_text()
    assert len(text.encode()) <= MAX_BYTES
    assert "<!" not in text  # no DOCTYPE, entity, comment or CDATA
    assert "<?" not in text  # no processing instruction (a style sheet)
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == "0,0,24,24"
    for element in root.iter():
        assert element.tag in SHAPES, element.tag
        assert set(element.attrib) <= ATTRIBUTES, element.attrib
        # no url(...), no scheme: nothing outside the drawing is referred to
        assert not [value for value in element.attrib.values() if ":" in value or "(" in value]


@pytest.mark.parametrize("name", [SERVER, *TOOLSETS])
def test_light_and_dark_differ_in_colour_only(name: str) -> None:
    """Drawn for a light background (dark blue) and a dark one (light blue), shape for shape."""
    light, dark = (icon_file(name, theme).read_text() for theme in ("light", "dark"))
    assert "stroke='#06a'" in light
    assert "stroke='#6cf'" in dark
    assert light.replace("#06a", "#6cf") == dark


def test_a_toolsets_icons_are_read_without_importing_the_toolset() -> None:
    """Icons are read from the files alone: finding them through each toolset's own package
    imported it, and looked each package up anew (ADR 0052)."""
    script = (
        "import sys\n"
        "from nextcloud_mcp_server.icons import TOOLSETS, icons_for\n"
        "before = {m for m in sys.modules if m.startswith('nextcloud_mcp_server.toolsets.')}\n"
        "assert all(icons_for(name) for name in TOOLSETS)\n"
        "after = {m for m in sys.modules if m.startswith('nextcloud_mcp_server.toolsets.')}\n"
        "print(sorted(after - before))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
