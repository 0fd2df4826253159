"""The MCP server process the find benchmark started over stdio: which one it is, and its
resident memory (read from /proc, Linux only)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _descendants(root: int) -> Iterator[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        yield pid
        todo += children.get(pid, [])


def server_pid() -> int:
    """The MCP server this process started over stdio (the newest: one runs at a time)."""
    found = []
    for pid in _descendants(os.getpid()):
        try:
            if b"nextcloud_mcp_server" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    if not found:
        raise RuntimeError("no server process found")
    return max(found)
