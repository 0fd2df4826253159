"""A minimal stdio MCP driver for benchmarks: spawn, initialize, tools/list, peak RSS."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass

__all__ = ["ColdStart", "cold_start", "summarize"]

PROTOCOL = "2025-11-25"


@dataclass(frozen=True)
class ColdStart:
    seconds: float
    peak_rss_kib: int
    tools: int


def _send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _receive(process: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"server exited with {process.wait()}")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cold_start(
    command: list[str],
    env: dict[str, str],
    *,
    inherit_env: bool = True,
    cwd: str | None = None,
    timeout: float = 120.0,
) -> ColdStart:
    """Spawn `command`, and time spawn -> initialize -> tools/list answered (killed after `timeout`
    seconds). With `inherit_env` false, `env` is the whole environment of the process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env} if inherit_env else env,
        cwd=cwd,
    )
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        _send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
        )
        _receive(process, 1)
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = _receive(process, 2)
        elapsed = time.perf_counter() - started
        peak = _peak_rss_kib(process.pid)
        tools = len(listed["result"]["tools"])
    finally:
        watchdog.cancel()
        if process.stdin:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
    return ColdStart(elapsed, peak, tools)


def summarize(runs: list[ColdStart]) -> dict[str, float]:
    seconds = [r.seconds for r in runs]
    rss = [r.peak_rss_kib for r in runs]
    return {
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "max_s": max(seconds),
        "peak_rss_mib": statistics.median(rss) / 1024,
        "tools": runs[0].tools,
    }
