"""Stopping and starting a test PostgreSQL cluster (`tests/postgres.py`) in place: same data
directory, same port, the same command line - as an operator's restart or a crash and recovery."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from tests.postgres import PostgresCluster, _wait_ready, postgres_cluster

__all__ = ["restartable_cluster", "start", "stop"]


@contextmanager
def restartable_cluster() -> Iterator[PostgresCluster]:
    """A cluster of its own that tests may stop and start; whichever server runs at the end is
    stopped (the cluster's own teardown knows only the first)."""
    with postgres_cluster() as cluster:
        first = cluster.process
        try:
            yield cluster
        finally:
            if cluster.process is not first and cluster.process.poll() is None:
                stop(cluster)


def stop(cluster: PostgresCluster) -> None:
    """Fast shutdown (SIGINT to the postmaster: `runuser` in front of it does not pass SIGINT on):
    open connections are told "terminating connection" and closed."""
    postmaster = int((cluster.root / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGINT)
    cluster.process.wait(30)
    if cluster.process.stderr:
        cluster.process.stderr.close()


def start(cluster: PostgresCluster, timeout: float = 60.0) -> None:
    """The same server again, once it accepts connections."""
    command = list(cluster.process.args)  # type: ignore[arg-type]
    # its log is not read: a pipe nobody empties would stop the server once full
    cluster.process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cluster.root
    )
    _wait_ready(cluster, timeout)
