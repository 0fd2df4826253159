"""What one hostile answer from "Nextcloud" costs this server: peak RSS, CPU and wall time.

A hostile upstream (tests/hostile.py) runs in this process; each answer is fetched by a fresh child
process through the server's own Nextcloud client (`NextcloudHTTP`, `WebDAVClient`, `json_body`)
with the default settings, so the figures are what a deployment would see. With --base, the same
answers are fetched by another checkout of the package (e.g. the one before the bounds) for a
before/after table. Every answer offers 64 MiB (the drip: one byte per 0.2 s); a child still
reading after --kill-after seconds is stopped and reported as such.

    .venv/bin/python bench/hostile_upstream.py [--base /tmp/base] [--kill-after 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import write_result  # noqa: E402

from tests.hostile import Hostile, hostile_server  # noqa: E402

SCENARIOS = {
    "huge-json": "JSON answer of 64 MiB (a notes list)",
    "gzip-bomb": "64 MiB of JSON gzipped to ~64 KiB",
    "huge-property": "PROPFIND with a 64 MiB property",
    "deep-xml": "PROPFIND nesting ~13 million elements",
    "drip": "one byte every 0.2 s",
}

CHILD = r"""
import asyncio, inspect, json, sys, time
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient

def hwm_mib():  # peak RSS of this process since exec (ru_maxrss would include the parent's)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024

async def main(url, scenario):
    options = {"max_retries": 0}
    if "deadline" in inspect.signature(NextcloudHTTP).parameters:
        options["deadline"] = 5.0  # the default is 60 s; shorter keeps the bench short
    http = NextcloudHTTP(url, **options)
    credential = BasicCredential("alice", "pw")
    rss_before = hwm_mib()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        if scenario in ("huge-property", "deep-xml"):
            await WebDAVClient(http, credential, "alice").stat(scenario)
        else:
            json_body(await http.request("GET", "/" + scenario, credential=credential), http.host)
        outcome = "accepted"
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"[:160]
    finally:
        await http.aclose()
    print(json.dumps({
        "outcome": outcome,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "peak_rss_mib": hwm_mib(),
        "rss_before_mib": rss_before,
    }))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


class _Upstream:
    """The hostile server on its own event loop in a thread."""

    def __init__(self) -> None:
        self.server: Hostile | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with hostile_server() as server:
            self.server = server
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> Hostile:
        self._thread.start()
        self._ready.wait(10)
        assert self.server is not None
        return self.server

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


def fetch(url: str, scenario: str, pythonpath: Path | None, kill_after: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, url, scenario],
            env=env,
            capture_output=True,
            text=True,
            timeout=kill_after,
            cwd=ROOT if pythonpath is None else pythonpath,
        )
    except subprocess.TimeoutExpired:
        return {
            "outcome": f"still reading after {kill_after:g} s (killed)",
            "wall_s": time.perf_counter() - started,
        }
    if done.returncode != 0:
        return {"outcome": f"child failed: {done.stderr.strip().splitlines()[-1:]}"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, help="checkout of the package before the bounds")
    parser.add_argument("--kill-after", type=float, default=20.0)
    args = parser.parse_args()
    builds: dict[str, Path | None] = {"this": None}
    if args.base is not None:
        builds = {"base": args.base.resolve(), **builds}
    results: dict[str, dict[str, Any]] = {}
    with _Upstream() as server:
        for scenario in SCENARIOS:
            for build, path in builds.items():
                sent_before = server.sent
                result = fetch(server.url, scenario, path, args.kill_after)
                result["upstream_sent_mib"] = (server.sent - sent_before) / 2**20
                results.setdefault(scenario, {})[build] = result
    print(f"{'answer':<15}{'build':<6}{'peak RSS MiB':>13}{'CPU s':>8}{'wall s':>8}{'sent MiB':>10}  outcome")
    for scenario, by_build in results.items():
        for build, r in by_build.items():
            rss = f"{r['peak_rss_mib']:.0f}" if "peak_rss_mib" in r else "-"
            cpu = f"{r['cpu_s']:.2f}" if "cpu_s" in r else "-"
            print(
                f"{scenario:<15}{build:<6}{rss:>13}{cpu:>8}{r.get('wall_s', 0):>8.1f}"
                f"{r['upstream_sent_mib']:>10.1f}  {r['outcome'][:70]}"
            )
    write_result("hostile_upstream", {"scenarios": SCENARIOS, "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
