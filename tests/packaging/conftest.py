"""Artifacts built once per session, the way `make dist` and `make mcpb` build them."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def tool_env(**extra: str) -> dict[str, str]:
    """PATH with this venv's uv, pipx and mcpb first; uv and pipx use this Python (no interpreter
    download) and the machine's package settings (PIP_*, the uv cache)."""
    keep = ("HOME", "LANG", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "UV_CACHE_DIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PATH"] = os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)])
    env["UV_PYTHON"] = sys.executable
    env["UV_PYTHON_DOWNLOADS"] = "never"
    if "PIP_FIND_LINKS" in env:
        env["UV_FIND_LINKS"] = env["PIP_FIND_LINKS"]  # the same local wheels pip uses, if any
    return {**env, **extra}


def run(args: list[str], *, timeout: float = 300, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """`python -m build --installer uv` (what `make dist` runs; uv makes the isolated build
    environments, 11 s against pip's 18 s at load 11, the same wheel): a wheel and an sdist,
    built once per run: the xdist workers of one run share it (their temporary folders have one
    parent; the run's id names it, so no other run's build is ever taken)."""
    base = tmp_path_factory.getbasetemp()  # a worker's is popen-gwN in the run's own folder
    out = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / f"dist-{testrun_uid}"
    out.mkdir(exist_ok=True)
    lock = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker's build, if it began first
        if not (out / ".built").exists():
            build = [sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(out), str(ROOT)]
            run(build, env=tool_env())
            (out / ".built").touch()
    finally:
        os.close(lock)
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    [found] = dist.glob("*.whl")
    return found


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`packaging/mcpb/build.py` (what `make mcpb` runs): the Claude Desktop extension."""
    out = tmp_path_factory.mktemp("mcpb")
    run([sys.executable, str(ROOT / "packaging" / "mcpb" / "build.py"), "--out", str(out)], env=tool_env())
    [found] = out.glob("*.mcpb")
    return found
