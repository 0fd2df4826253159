"""The published PyPI package `nextcloud-mcp-server` (a different project that shares the name), in
its own throwaway virtual environment, for side-by-side comparisons.

    .venv/bin/python bench/published.py [--version 0.202.1] [--force]

installs it into bench/.published-venv/ (skipped when that version is already there) and prints
the path of its console script.
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


def ensure_installed(version: str = VERSION, venv: Path = VENV, *, force: bool = False) -> Path:
    """Create `venv` with `python -m venv` and pip-install the package there; return its script."""
    if not force and installed_version(venv) == version:
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
    subprocess.run(
        [str(_python(venv)), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
         f"nextcloud-mcp-server=={version}"],
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
    args = parser.parse_args()
    print(ensure_installed(args.version, force=args.force))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
