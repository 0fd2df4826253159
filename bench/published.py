"""The published PyPI package `nextcloud-mcp-server` (a different project that shares the name), in
its own throwaway virtual environment, for side-by-side comparisons.

    .venv/bin/python bench/published.py [--version 0.202.1] [--force]

installs it into bench/.published-venv/ (skipped when that version is already there) and prints
the path of its console script. `--extras semantic` adds its vector search (qdrant-client,
fastembed, openai, ...); the versions of everything it brings are pinned by
bench/published-constraints.txt (regenerate: install with --force --extras semantic without the
file, then `bench/.published-venv/bin/pip freeze > bench/published-constraints.txt`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["VENV", "VERSION", "ensure_installed", "installed_version"]

HERE = Path(__file__).resolve().parent
VENV = HERE / ".published-venv"
VERSION = "0.202.1"
CONSTRAINTS = HERE / "published-constraints.txt"
# a module each extra brings: present when that extra is installed
_EXTRA_MARKS = {"semantic": "qdrant_client"}
INSTALL_TIMEOUT_S = 1800


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def installed_version(venv: Path = VENV) -> str | None:
    """The version of `nextcloud-mcp-server` installed in `venv`, or None."""
    python = _python(venv)
    if not python.exists():
        return None
    probe = subprocess.run(
        [str(python), "-I", "-c", "import importlib.metadata as m; print(m.version('nextcloud-mcp-server'))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def _has_extra(venv: Path, extras: str) -> bool:
    marks = [_EXTRA_MARKS[e] for e in extras.split(",") if e]
    if not marks:
        return True
    probe = [str(_python(venv)), "-I", "-c", "import importlib.util as u, sys; "
             f"sys.exit(0 if all(u.find_spec(m) for m in {marks!r}) else 1)"]  # fmt: skip
    return subprocess.run(probe, capture_output=True, timeout=60).returncode == 0


def ensure_installed(
    version: str = VERSION, venv: Path = VENV, *, force: bool = False, extras: str = ""
) -> Path:
    """Create `venv` with `python -m venv` and pip-install the package there (with `extras`, e.g.
    "semantic"); return its script."""
    if not force and installed_version(venv) == version and _has_extra(venv, extras):
        return venv / "bin" / "nextcloud-mcp-server"
    started = time.monotonic()
    if force or not _python(venv).exists():
        print(f"creating {venv} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    print(
        f"installing nextcloud-mcp-server=={version} from PyPI into {venv} (first time: minutes) ...",
        file=sys.stderr,
        flush=True,
    )
    wanted = f"nextcloud-mcp-server[{extras}]=={version}" if extras else f"nextcloud-mcp-server=={version}"
    pinned = ["-c", str(CONSTRAINTS)] if CONSTRAINTS.is_file() else []
    subprocess.run(
        [str(_python(venv)), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
         *pinned, wanted],
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )  # fmt: skip
    found = installed_version(venv)
    if found != version:
        raise RuntimeError(f"{venv} has nextcloud-mcp-server {found}, expected {version}")
    print(f"installed in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return venv / "bin" / "nextcloud-mcp-server"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION)
    parser.add_argument("--force", action="store_true", help="recreate the virtual environment")
    parser.add_argument("--extras", default="", help='the package\'s extras, e.g. "semantic"')
    args = parser.parse_args()
    print(ensure_installed(args.version, force=args.force, extras=args.extras))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
