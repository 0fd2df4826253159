"""Build the Claude Desktop extension (`make mcpb`): dist/nextcloud-mcp-bridge-<version>.mcpb.

    python packaging/mcpb/build.py [--out DIR]

The bundle is of MCPB server type `uv` (manifest 0.4): it carries the package's source, an entry
script and a pyproject.toml whose dependencies are the package's, pinned to constraints.txt; the
host runs `uv run --directory <bundle> server/main.py`, and uv installs those pins on first start.
Compiled dependencies (pydantic-core, cryptography) rule out bundling a lib/ folder that would
work on every platform. The official MCPB CLI (packaging/mcpb/node_modules, pinned by its lockfile)
validates the manifest and packs the folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MCPB = HERE / "node_modules" / ".bin" / "mcpb"
NAME = "nextcloud-mcp-bridge"

sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server import __version__  # noqa: E402
from nextcloud_mcp_server.tools import all_tools  # noqa: E402
from nextcloud_mcp_server.toolsets import Declaration, declarations  # noqa: E402


def _toml_list(items: list[str]) -> str:
    return "[\n" + "".join(f"    {json.dumps(item)},\n" for item in items) + "]"


def bundle_pyproject() -> str:
    """The bundle's own project: the package's runtime dependencies, every version pinned by the
    repository's constraints.txt; nothing to build (the source sits beside it)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [
        line.strip()
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return (
        "# Written by packaging/mcpb/build.py: the runtime dependencies of nextcloud-mcp-bridge.\n"
        "[project]\n"
        f'name = "{NAME}-extension"\n'
        f'version = "{__version__}"\n'
        f"requires-python = {json.dumps(project['requires-python'])}\n"
        f"dependencies = {_toml_list(project['dependencies'])}\n\n"
        "[tool.uv]\n"
        "package = false\n"
        f"constraint-dependencies = {_toml_list(pins)}\n"
    )


def toolsets_description() -> str:
    """What the toolsets field says, from the toolsets' declarations."""
    chosen = [found for found in declarations() if found.chosen]
    default = ", ".join(found.name for found in chosen if found.default)
    others = [found.name for found in chosen if not found.default]
    return (
        f"default ({default}), all, or names separated by commas, e.g. default,{','.join(others[:2])}. "
        f"Known: {', '.join(others)}; an app's tools appear only if it is installed for you."
    )


def _default_and_more() -> tuple[list[Declaration], list[Declaration]]:
    chosen = [found for found in declarations() if found.chosen]
    return [found for found in chosen if found.default], [found for found in chosen if not found.default]


def descriptions() -> tuple[str, str]:
    """The extension's short and long description: what the default toolsets offer, and how to
    add the others (the field "Which parts of Nextcloud")."""
    default, more = _default_and_more()
    offers = "; ".join(found.summary for found in default)
    apps = ", ".join(found.app.name for found in more if found.app is not None)
    names = [found.name for found in default]
    first_apps = ", ".join(found.app.name for found in more[:3] if found.app is not None)
    short = (
        f"Your Nextcloud in Claude: {', '.join(names[:-1])} and {names[-1]} ({first_apps} and more "
        "on request), asking you before anything is deleted or published."
    )
    long = (
        f"Connects Claude to your own Nextcloud with an app password. Offered by default: {offers}. "
        f"More on request: {apps}; add them in the field 'Which parts of Nextcloud' "
        f"(e.g. default,{more[0].name}), and each appears for you only where the app is enabled. "
        "Deleting, overwriting, sharing or posting to several people asks you first, in a form the "
        "model cannot answer. Create the app password in Nextcloud under Settings > Security > "
        "Devices & sessions."
    )
    return short, long


def keywords() -> list[str]:
    default, _ = _default_and_more()
    return ["nextcloud", *(found.name for found in default), "caldav", "carddav", "webdav"]


def links(pyproject: str | None = None) -> dict[str, str]:
    """homepage and support from pyproject.toml's [project.urls] (Homepage, Issues), when it has
    them: one place names where the project lives."""
    text = (ROOT / "pyproject.toml").read_text() if pyproject is None else pyproject
    urls = tomllib.loads(text)["project"].get("urls", {})
    found = {"homepage": urls.get("Homepage"), "support": urls.get("Issues")}
    return {key: value for key, value in found.items() if value}


def manifest() -> dict[str, object]:
    document = json.loads((HERE / "manifest.json").read_text())
    document["version"] = __version__
    document["user_config"]["toolsets"]["description"] = toolsets_description()
    document["description"], document["long_description"] = descriptions()
    document["keywords"] = keywords()
    document.update(links())
    # the tools a person gets with the form's defaults: the install preview shows no others
    default = {found.name for found in _default_and_more()[0]}
    document["tools"] = [
        {"name": spec.name, "description": " ".join(spec.description.split()).split(". ")[0].rstrip(".")}
        for spec in all_tools()
        if spec.toolset in default
    ]
    return document  # type: ignore[no-any-return]


def stage(folder: Path) -> None:
    """The bundle's files, laid out as they will be unpacked."""
    shutil.copytree(
        ROOT / "nextcloud_mcp_server",
        folder / "nextcloud_mcp_server",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    (folder / "server").mkdir()
    shutil.copy2(HERE / "server" / "main.py", folder / "server" / "main.py")
    shutil.copy2(HERE / "icon.png", folder / "icon.png")
    (folder / "pyproject.toml").write_text(bundle_pyproject())
    (folder / "manifest.json").write_text(json.dumps(manifest(), indent=2) + "\n")


def mcpb(*args: str) -> str:
    if not MCPB.exists():
        raise SystemExit(f"{MCPB} is missing: run `make mcpb` (it installs the MCPB CLI from npm)")
    done = subprocess.run(  # noqa: S603 - our own pinned CLI
        [str(MCPB), *args], capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"mcpb {args[0]} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def build(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    target = out.absolute() / f"{NAME}-{__version__}.mcpb"
    with tempfile.TemporaryDirectory(prefix="mcpb-") as tmp:
        folder = Path(tmp) / NAME
        folder.mkdir()
        stage(folder)
        mcpb("validate", str(folder / "manifest.json"))
        mcpb("pack", str(folder), str(target))
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    target = build(parser.parse_args().out)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
