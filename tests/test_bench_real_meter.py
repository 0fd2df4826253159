"""The real-Nextcloud benchmark's accounting (bench/real/meter.py): requests and bytes from nginx's
access log, Nextcloud's CPU from /proc lines. Made-up lines only: no Nextcloud, no /proc."""

from __future__ import annotations

from types import ModuleType

from tests.bench_modules import load_bench


def _meter() -> ModuleType:
    return load_bench("real/meter.py", "bench_real_meter")


LOG = (
    '127.0.0.1 - alice [26/Nov/2026:09:17:36 +0000] "PROPFIND /remote.php/dav/files/alice/A%20B/ HTTP/1.1" '
    '207 52311 "-" "python-httpx/0.28.1"\n'
    '127.0.0.1 - alice [26/Nov/2026:09:17:36 +0000] "GET /index.php/apps/notes/api/v1/notes?exclude=content '
    'HTTP/1.1" 304 0 "-" "aiohttp"\n'
    '127.0.0.1 - - [26/Nov/2026:09:17:37 +0000] "HEAD /status.php HTTP/1.1" 200 - "-" "curl/7.88"\n'
    '127.0.0.1 - alice [26/Nov/2026:09:17:38 +0000] "REPORT /remote.php/dav/calendars/alice/pers'  # cut line
)


def test_access_log_lines_give_method_status_and_bytes() -> None:
    found = _meter().parse_access_log(LOG)
    assert [(r.method, r.status, r.bytes) for r in found] == [
        ("PROPFIND", 207, 52311),
        ("GET", 304, 0),
        ("HEAD", 200, 0),
    ]
    assert found[1].path == "/index.php/apps/notes/api/v1/notes?exclude=content"


def _stat(pid: int, name: str, ppid: int, utime: int, stime: int, cutime: int, cstime: int) -> str:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt .. cmajflt utime stime cutime cstime ...
    return (
        f"{pid} ({name}) S {ppid} 1 1 0 -1 4194560 10 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 1 0 5 0 0"
    )


def test_stat_line_with_spaces_and_parentheses_in_the_name() -> None:
    stat = _meter().parse_stat(_stat(4242, "php-fpm: pool (www) x", 17, 30, 12, 500, 70))
    assert (stat.pid, stat.ppid, stat.own_ticks, stat.children_ticks) == (4242, 17, 42, 570)


def test_tree_cpu_counts_the_master_its_reaped_and_its_live_children_only() -> None:
    meter = _meter()
    stats = [
        meter.parse_stat(_stat(100, "php-fpm", 1, 5, 5, 300, 100)),  # master: 10 own + 400 reaped
        meter.parse_stat(_stat(101, "php-fpm", 100, 20, 10, 0, 0)),  # live worker: 30
        meter.parse_stat(_stat(102, "php-fpm", 100, 7, 3, 0, 0)),  # live worker: 10
        meter.parse_stat(_stat(200, "nginx", 1, 50, 50, 9, 9)),  # another tree: not counted
        meter.parse_stat(_stat(201, "nginx", 200, 8, 8, 0, 0)),
    ]
    assert meter.tree_cpu_ticks(100, stats) == 450
    # A worker recycled: its time moves from "live" to the master's cutime; the sum does not drop.
    recycled = [stats[0].__class__(100, 1, 10, 430), stats[2], *stats[3:]]
    assert meter.tree_cpu_ticks(100, recycled) == 450
