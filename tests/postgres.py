"""A throwaway PostgreSQL cluster for tests: Debian's `postgresql` package, `initdb` in a temp dir,
listening on a free port of 127.0.0.1 (and a unix socket inside the data dir's parent).

PostgreSQL refuses to run as root, so under root (CI, this machine) the cluster runs as `nobody`
and its directory belongs to that user. `database()` gives each test an empty database of its own.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.processes import free_port

__all__ = ["PostgresCluster", "postgres_cluster"]

USER = "nobody"


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL is missing: apt-get install postgresql (tests/system-packages.txt)")
    return Path(found[-1]).parent


def _as_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", USER, "--", *command] if os.geteuid() == 0 else command


@dataclass
class PostgresCluster:
    port: int
    root: Path
    process: subprocess.Popen[bytes]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    @contextmanager
    def database(self) -> Iterator[str]:
        """An empty database for one test; dropped afterwards."""
        name = f"t_{os.urandom(6).hex()}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
        try:
            yield self.url(name)
        finally:
            with psycopg.connect(self.url(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]


@contextmanager
def postgres_cluster(timeout: float = 60.0) -> Iterator[PostgresCluster]:
    bin_dir = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="mcp-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, USER)
        shutil.chown(sockets, USER)
    log = root / "initdb.log"
    try:
        with log.open("wb") as out:
            initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync"]
            subprocess.run(
                _as_user(initdb),
                check=True,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=root,
            )
        port = free_port()
        settings = ["fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=200"]
        command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1"]
        command += ["-k", str(sockets)] + [a for s in settings for a in ("-c", s)]
        process = subprocess.Popen(
            _as_user(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root
        )
        cluster = PostgresCluster(port, root, process)
        try:
            _wait_ready(cluster, timeout)
            yield cluster
        finally:
            process.terminate()  # smart shutdown: SIGTERM
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            if process.stderr:
                process.stderr.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(cluster: PostgresCluster, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(cluster.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if cluster.process.poll() is not None:
                output = cluster.process.stderr.read().decode() if cluster.process.stderr else ""
                raise RuntimeError(f"postgres exited with {cluster.process.returncode}: {output}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"postgres did not accept connections within {timeout} s") from None
            time.sleep(0.05)
