"""What one call costs the real Nextcloud: its requests and bytes (from the instance's nginx access
log) and its CPU (php-fpm and nginx, from /proc). Pure parsing is split from reading files so it
can be tested with made-up lines."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cost", "Meter", "Request", "parse_access_log", "parse_stat", "tree_cpu_ticks"]

CLK_TCK = os.sysconf("SC_CLK_TCK")
# nginx's "combined" format: ... "METHOD PATH PROTO" STATUS BYTES "referer" "agent"
_COMBINED = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) (?P<bytes>\d+|-) ')


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    status: int
    bytes: int


def parse_access_log(text: str) -> list[Request]:
    """The requests of complete lines of a combined-format access log (other lines are skipped)."""
    found = []
    for line in text.splitlines():
        match = _COMBINED.search(line)
        if match:
            sent = match["bytes"]
            found.append(
                Request(match["method"], match["path"], int(match["status"]), 0 if sent == "-" else int(sent))
            )
    return found


@dataclass(frozen=True)
class Stat:
    pid: int
    ppid: int
    own_ticks: int  # utime + stime
    children_ticks: int  # cutime + cstime: reaped children (recycled php-fpm workers)


def parse_stat(line: str) -> Stat:
    """One /proc/PID/stat line (the command name may hold spaces and parentheses)."""
    head, _, rest = line.rpartition(")")
    fields = rest.split()
    # fields[0] is the state (field 3): ppid is field 4, utime..cstime fields 14-17
    return Stat(
        int(head.split("(", 1)[0]),
        int(fields[1]),
        int(fields[11]) + int(fields[12]),
        int(fields[13]) + int(fields[14]),
    )


def tree_cpu_ticks(master: int, stats: list[Stat]) -> int:
    """CPU ticks of a master and its children: its own, its reaped children's, its live children's.
    A recycled worker's time moves from "live child" to the master's cutime, so the sum only grows."""
    total = 0
    for stat in stats:
        if stat.pid == master:
            total += stat.own_ticks + stat.children_ticks
        elif stat.ppid == master:
            total += stat.own_ticks
    return total


def _all_stats() -> list[Stat]:
    stats = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    stats.append(parse_stat(handle.read()))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    return stats


@dataclass
class Cost:
    requests: list[Request]
    php_s: float
    nginx_s: float

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.requests)

    @property
    def cpu_s(self) -> float:
        return self.php_s + self.nginx_s


class Meter:
    """Mark before a call, then `cost()` after it: what Nextcloud did in between."""

    def __init__(self, instance_dir: Path) -> None:
        self.log = instance_dir / "log" / "nginx-access.log"
        self.run = instance_dir / "run"
        self._mark: tuple[int, int, int] = (0, 0, 0)

    def _pids(self) -> tuple[int, int]:
        return int((self.run / "php-fpm.pid").read_text()), int((self.run / "nginx.pid").read_text())

    def _cpu(self) -> tuple[int, int]:
        php, nginx = self._pids()
        stats = _all_stats()
        return tree_cpu_ticks(php, stats), tree_cpu_ticks(nginx, stats)

    def mark(self) -> None:
        php, nginx = self._cpu()
        self._mark = (self.log.stat().st_size, php, nginx)

    def cost(self) -> Cost:
        """Requests logged and CPU used since `mark()`. nginx writes a request's line when it has
        sent the response, which can be a moment after the client read it: wait until the log
        stops growing (a short quiet period, bounded)."""
        offset, php0, nginx0 = self._mark
        size, quiet = self.log.stat().st_size, 0
        for _ in range(40):  # at most ~0.4 s
            time.sleep(0.01)
            now = self.log.stat().st_size
            quiet = quiet + 1 if now == size else 0
            size = now
            if quiet >= 3:
                break
        with open(self.log, "rb") as handle:
            handle.seek(offset)
            text = handle.read(size - offset).decode(errors="replace")
        php, nginx = self._cpu()
        return Cost(parse_access_log(text), (php - php0) / CLK_TCK, (nginx - nginx0) / CLK_TCK)
