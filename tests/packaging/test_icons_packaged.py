"""The icons travel in the wheel and the sdist, and the server reads them from the wheel itself."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.icons import TOOLSETS
from tests.packaging.conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

PACKAGE = ROOT / "nextcloud_mcp_server"
# the server's beside icons/__init__.py, each toolset's in its own folder (docs/ADR/0052)
ICONS = sorted([*(PACKAGE / "icons").glob("*.svg"), *(PACKAGE / "toolsets").glob("*/icons/*.svg")])
# Run from the wheel alone (a zip on the path, before the checkout's editable install).
FROM_WHEEL = """
import json, nextcloud_mcp_server.icons as icons
print(json.dumps({"module": icons.__file__,
    "icons": {n: [i.src for i in icons.icons_for(n)] for n in (icons.SERVER, *icons.TOOLSETS)}}))
"""


def test_the_wheel_and_the_sdist_carry_every_icon(dist: Path, wheel: Path) -> None:
    # the server and every toolset, light and dark (the icons test holds TOOLSETS to the toolsets)
    assert len(ICONS) == 2 * (1 + len(TOOLSETS))
    with zipfile.ZipFile(wheel) as archive:
        for icon in ICONS:
            assert archive.read(icon.relative_to(ROOT).as_posix()) == icon.read_bytes()
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = set(archive.getnames())
    top = f"nextcloud_mcp_bridge-{__version__}"
    assert {f"{top}/{icon.relative_to(ROOT).as_posix()}" for icon in ICONS} <= members


def test_the_icons_are_read_from_the_installed_package(wheel: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FROM_WHEEL],
        env={"PYTHONPATH": str(wheel), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["module"].startswith(str(wheel))  # not the checkout
    assert len(found["icons"]) == 1 + len(TOOLSETS)
    assert all(
        len(pair) == 2 and all(src.startswith("data:image/svg+xml,") for src in pair)
        for pair in found["icons"].values()
    )
