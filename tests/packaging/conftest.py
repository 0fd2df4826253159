"""Artifacts built once per session, the way `make dist` and `make mcpb` build them."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
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


@contextlib.contextmanager
def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, testrun_uid: str, name: str
) -> Iterator[tuple[Path, bool]]:
    """A folder made once per run and shared by its xdist workers (their temporary folders have one
    parent; the run's id names it, so no other run's is ever taken), and whether it is still to be
    made; held under a lock meanwhile, so the other worker waits for a making begun first."""
    base = tmp_path_factory.getbasetemp()  # a worker's is popen-gwN in the run's own folder
    out = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / f"{name}-{testrun_uid}"
    out.mkdir(exist_ok=True)
    lock = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fresh = not (out / ".built").exists()
        yield out, fresh
        if fresh:  # only once made whole: a failure leaves it to the next to try
            (out / ".built").touch()
    finally:
        os.close(lock)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """`python -m build --installer uv` (what `make dist` runs; uv makes the isolated build
    environments, 11 s against pip's 18 s at load 11, the same wheel): a wheel and an sdist,
    built once per run."""
    with once_per_run(tmp_path_factory, testrun_uid, "dist") as (out, fresh):
        if fresh:
            build = [sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(out), str(ROOT)]
            run(build, env=tool_env())
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    [found] = dist.glob("*.whl")
    return found


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """`packaging/mcpb/build.py` (what `make mcpb` runs): the Claude Desktop extension, built once
    per run (11 s at load 5; each real version's tests run on their own worker, ADR 0099)."""
    with once_per_run(tmp_path_factory, testrun_uid, "mcpb") as (out, fresh):
        if fresh:
            build = [sys.executable, str(ROOT / "packaging" / "mcpb" / "build.py"), "--out", str(out)]
            run(build, env=tool_env())
    [found] = out.glob("*.mcpb")
    return found
