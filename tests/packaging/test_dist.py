"""`make dist`: the wheel installs as users install it (pip into a fresh venv, pipx, uvx) and its
command serves MCP over stdio."""

from __future__ import annotations

import re
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.views import VIEWS
from tests.backends import Nextcloud
from tests.mcp_clients import structured
from tests.packaging.conftest import ROOT, once_per_run, run, tool_env

# Building the wheel and pip-installing it into a fresh venv happen inside the first test that
# needs them; on a busy machine that alone took over the suite's 120 s hang guard (issue 14).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

COMMAND = "nextcloud-mcp-bridge"
THEIRS = "nextcloud-mcp-server"  # the command of the other project on PyPI (ADR 0022)
# every distribution in an environment, "name version" a line
LISTING = "import importlib.metadata as m\nfor d in m.distributions(): print(d.metadata['Name'], d.version)"


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The wheel installed into a fresh venv, once per run (the double's tests and each real
    version's may run on different workers, ADR 0099); its bin folder. uv installs the versions
    constraints.txt pins (pip took 35 s idle, 62 s at load 5, to resolve and fetch them; uv 3 s),
    then pip installs the wheel itself over uv's copy and `pip check` finds every requirement in
    its metadata met: pip users' way to the same environment (pipx takes uv when it is there)."""
    with once_per_run(tmp_path_factory, testrun_uid, "installed") as (out, fresh):
        venv = out / "venv"
        python = str(venv / "bin" / "python")
        if fresh:
            env = tool_env()
            run(["uv", "venv", "--quiet", "--seed", "--clear", str(venv)], env=env)
            constraints = str(ROOT / "constraints.txt")
            uv_pip = ["uv", "pip", "install", "--quiet", "--python", python, "-c", constraints]
            run([*uv_pip, str(wheel)], env=env)
            pip = [python, "-m", "pip", "--disable-pip-version-check"]
            run([*pip, "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)], env=env)
            run([*pip, "check"], env=env)
    return venv / "bin"


def test_the_distribution_has_its_own_name_and_command(dist: Path, wheel: Path) -> None:
    """Wheel and sdist are `nextcloud-mcp-bridge`; the only command is ours, not the other project's;
    the sdist carries the package and no tests."""
    assert wheel.name == f"nextcloud_mcp_bridge-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read(f"nextcloud_mcp_bridge-{__version__}.dist-info/entry_points.txt").decode()
    assert f"{COMMAND} = nextcloud_mcp_server.cli:main" in entry_points
    assert THEIRS not in entry_points
    assert "nextcloud_mcp_server/cli.py" in names
    assert not [n for n in names if n.startswith("tests/")]
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    top = f"nextcloud_mcp_bridge-{__version__}"
    assert f"{top}/nextcloud_mcp_server/cli.py" in members
    assert f"{top}/.env.example" in members
    assert not [m for m in members if m.startswith(f"{top}/tests")]


def test_the_installed_command_answers_help(installed: Path) -> None:
    assert not (installed / THEIRS).exists()
    done = run([str(installed / COMMAND), "--help"])
    assert done.stdout.startswith(f"usage: {COMMAND} ")
    assert "check" in done.stdout
    version = run([str(installed / COMMAND), "--version"])
    assert version.stdout.strip() == f"{COMMAND} {__version__}"


async def test_the_installed_command_serves_stdio(
    installed: Path, nextcloud: Nextcloud, tmp_path: Path
) -> None:
    """Claude Desktop's way: the installed command over stdio against the Nextcloud under test."""
    params = StdioServerParameters(
        command=str(installed / COMMAND), args=["run"], env=nextcloud.server_env(), cwd=tmp_path
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            created = structured(
                await session.call_tool("nc_notes_create_note", {"title": "From the wheel", "content": "hi"})
            )
    assert [(n["id"], n["title"]) for n in nextcloud.notes()] == [(created["id"], "From the wheel")]


def _readme_uvx() -> list[str]:
    """The uvx command the README's quick start gives (arguments, checkout path as written)."""
    [command] = re.findall(r"`(uvx [^`]+)`", (ROOT / "README.md").read_text())
    return str(command).split()


def _pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pairs = (line.split("==") for line in lines if "==" in line and not line.startswith("#"))
    return {_canonical(name): version.strip() for name, version in pairs}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_uvx_as_the_readme_says_installs_the_tested_versions(wheel: Path, tmp_path: Path) -> None:
    """The README's `uvx --constraints <checkout>/constraints.txt --from <checkout> ...` (here
    `--from` the wheel that checkout builds) runs our command, and every distribution it installs
    is at the version the tests ran with (without the constraints uv takes the newest allowed)."""
    checkout = "/path/to/this/checkout"
    command = _readme_uvx()
    assert command[-2:] == [COMMAND, "run"]
    options = [
        str(wheel) if value == checkout else value.replace(checkout, str(ROOT)) for value in command[1:-2]
    ]
    assert options[options.index("--constraints") + 1] == str(ROOT / "constraints.txt")
    env = tool_env(UV_TOOL_DIR=str(tmp_path / "tools"))
    done = run(["uvx", *options, COMMAND, "--version"], env=env, cwd=tmp_path)
    assert done.stdout.strip() == f"{COMMAND} {__version__}"
    installed = run(["uvx", *options, "python", "-c", LISTING], env=env, cwd=tmp_path).stdout.splitlines()
    pins = _pins()
    versions = {_canonical(name): version for name, version in (line.split() for line in installed)}
    assert versions.pop("nextcloud-mcp-bridge") == __version__
    assert {
        name: (version, pins.get(name)) for name, version in versions.items() if pins.get(name) != version
    } == {}
    assert {"mcp", "pydantic", "icalendar"} <= set(versions)


def test_pipx_installs_the_wheel(wheel: Path, tmp_path: Path) -> None:
    """`pipx install <wheel>` puts exactly our command on the PATH."""
    bin_dir = tmp_path / "bin"
    env = tool_env(
        PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(tmp_path / "man")
    )
    pip_args = f"--quiet -c {ROOT / 'constraints.txt'}"
    run(["pipx", "install", "--pip-args", pip_args, str(wheel)], env=env, cwd=tmp_path)
    assert sorted(p.name for p in bin_dir.iterdir()) == [COMMAND]
    done = subprocess.run(
        [str(bin_dir / COMMAND), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, f"{COMMAND} {__version__}")


def test_the_views_ship_in_the_wheel_and_the_sdist(dist: Path, wheel: Path) -> None:
    """The MCP Apps views are package data: the installed server serves them without a build."""
    wanted = [f"nextcloud_mcp_server/views/{view.file}" for view in VIEWS]
    with zipfile.ZipFile(wheel) as archive:
        assert [archive.read(name) for name in wanted] == [(ROOT / name).read_bytes() for name in wanted]
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert all(f"nextcloud_mcp_bridge-{__version__}/{name}" in members for name in wanted)
