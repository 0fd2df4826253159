"""Server processes for tests: started, waited for (poll with a deadline), always stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

__all__ = ["free_port", "server_process", "wait_for_http"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_http(url: str, process: subprocess.Popen[str], timeout: float = 30.0) -> httpx.Response:
    """Poll `url` until it answers, the process dies, or the deadline passes."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2) as client:
        while True:
            try:
                return client.get(url)
            except httpx.TransportError:
                if process.poll() is not None:
                    output = process.stderr.read() if process.stderr else ""
                    raise RuntimeError(f"server exited with {process.returncode}: {output}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{url} did not answer within {timeout} s") from None
                time.sleep(0.05)


@contextmanager
def server_process(
    args: list[str], *, env: dict[str, str], cwd: Path, ready_url: str | None
) -> Iterator[subprocess.Popen[str]]:
    """`python -m nextcloud_mcp_server <args>` until `ready_url` answers (None: the caller waits,
    e.g. for several started at once); terminated on exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", "nextcloud_mcp_server", *args],
        env={**os.environ, **env},
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if ready_url is not None:
            wait_for_http(ready_url, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr:
            process.stderr.close()
