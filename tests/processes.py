"""Server processes for tests: started, waited for (poll with a deadline), always stopped."""

from __future__ import annotations

import os
import secrets
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
    """A loopback port nothing is bound to now, for a server started next, outside the range the
    kernel draws outgoing connections' ports from. A port from that range (what binding port 0
    gives) can be taken by any new connection before the server binds it: under load a replica
    failed so ("address already in use"). Drawn with the system's randomness: pytest-randomly
    seeds `random` alike in every worker, which would draw the same ports in both."""
    low, high = _outgoing_ports()
    candidates = [(10000, low - 1), (high + 1, 65535)]  # not below 10000: services' usual ports
    start, end = max(candidates, key=lambda span: span[1] - span[0])
    for _ in range(100):
        port = _draw(start, end)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port between {start} and {end}")


def _draw(start: int, end: int) -> int:
    return start + secrets.randbelow(end - start + 1)


def _outgoing_ports() -> tuple[int, int]:
    """The kernel's range for outgoing connections' local ports (Linux's default 32768-60999)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


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
