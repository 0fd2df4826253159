"""Processes for benchmarks: spawned with a clean environment, waited for with a deadline, always
stopped; and what /proc says about them (RSS, CPU time)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "ROOT",
    "Spawned",
    "clean_env",
    "cpu_seconds",
    "cpu_split",
    "free_port",
    "latency_summary",
    "percentile",
    "rss_kib",
    "spawn",
    "write_result",
]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
CLK_TCK = os.sysconf("SC_CLK_TCK")
# Settings of either server that a developer's shell may have exported; a benchmark sets its own.
_SERVER_PREFIXES = (
    "NEXTCLOUD_",
    "OIDC_",
    "MCP_",
    "OAUTH_",
    "ENABLE_",
    "TOKEN_",
    "STORE_",
    "LOG_",
    "METRICS_",
    "DATABASE_",
    "VECTOR_",
    "QDRANT_",
    "OTEL_",
)


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without server settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SERVER_PREFIXES)}
    env.pop("PYTHONPATH", None)
    return {**env, **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kib(pid: int, field: str = "VmRSS:") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process (not its children)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # utime, stime (fields 14, 15)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (not its children)."""
    return sum(cpu_split(pid))


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1))]


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    return {
        "calls": len(seconds),
        "median_ms": statistics.median(seconds) * 1000,
        "p95_ms": percentile(seconds, 0.95) * 1000,
        "min_ms": min(seconds) * 1000,
    }


def write_result(name: str, data: Any) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(data, indent=2, default=str))
    return out


@dataclass
class Spawned:
    process: subprocess.Popen[bytes]
    log: Path
    ready: dict[str, Any]

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _wait_ready_line(spawned: Spawned, deadline: float) -> None:
    """Read the first JSON line the process prints on stdout (the double's ready line)."""
    assert spawned.process.stdout is not None
    os.set_blocking(spawned.process.stdout.fileno(), False)
    buffer = b""
    while b"\n" not in buffer:
        chunk = spawned.process.stdout.read()
        if chunk:
            buffer += chunk
            continue
        if spawned.process.poll() is not None:
            raise RuntimeError(f"exited with {spawned.process.returncode}: {spawned.log_tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no ready line within the deadline: {spawned.log_tail()}")
        time.sleep(0.02)
    spawned.ready = json.loads(buffer.split(b"\n", 1)[0])


def _wait_http(spawned: Spawned, url: str, deadline: float) -> None:
    with httpx.Client(timeout=2) as client:
        while True:
            try:
                client.get(url)
                return
            except httpx.TransportError:
                if spawned.process.poll() is not None:
                    raise RuntimeError(
                        f"exited with {spawned.process.returncode}: {spawned.log_tail()}"
                    ) from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{url} did not answer in time: {spawned.log_tail()}") from None
                time.sleep(0.05)


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL; then anything left in the process group it leads (its own children)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # a group this benchmark created (start_new_session)
    if process.stdout:
        process.stdout.close()


@contextmanager
def spawn(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    log: Path,
    cwd: Path | None = None,
    ready_url: str | None = None,
    ready_line: bool = False,
    timeout: float = 60.0,
) -> Iterator[Spawned]:
    """Start `args` (stderr to `log`), wait until ready, yield it; stop it on exit, whatever happens."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as log_file:
        process = subprocess.Popen(
            list(args),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if ready_line else log_file,
            stderr=log_file,
            start_new_session=True,
        )
    spawned = Spawned(process, log, {})
    try:
        deadline = time.monotonic() + timeout
        if ready_line:
            _wait_ready_line(spawned, deadline)
        if ready_url:
            _wait_http(spawned, ready_url, deadline)
        yield spawned
    finally:
        stop(process)
