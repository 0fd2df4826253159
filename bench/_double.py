"""The Nextcloud double (tests/nextcloud_double) as its own process for benchmarks, with a meter:
every request is counted and timed at the double's front door (arrival to last byte sent), and
`GET /__bench/stats` answers the totals. Also: seeding a user's notes and files on disk.

    .venv/bin/python bench/_double.py --data DIR [--user NAME:LOGIN_PW:APP_PW ...] [--idp-issuer URL]

It is `python -m tests.nextcloud_double` (same options, same {"ready": true, "url": ...} line)
with the meter wrapped around the double.
"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from _procs import Spawned, clean_env, spawn  # noqa: E402

__all__ = ["DoubleStats", "running_double", "seed_user"]

STATS_PATH = "/__bench/stats"


def _kind(method: str, path: str) -> str:
    if path.startswith("/index.php/apps/notes/"):
        return f"{method} notes"
    if path.startswith("/remote.php/dav/files/"):
        return f"{method} webdav"
    if path.startswith("/remote.php/dav"):
        return f"{method} caldav"
    if path.startswith("/ocs/"):
        return f"{method} ocs"
    return f"{method} {path}"


class Metered:
    """ASGI wrapper: counts and times every HTTP request that reaches the double."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self.busy_s = 0.0
        self.kinds: collections.Counter[str] = collections.Counter()
        self.peers: set[tuple[str, int]] = set()  # client addresses seen: new ones are new connections

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == STATS_PATH:
            await asyncio.sleep(0.005)  # let requests whose answer was just sent finish their bookkeeping
            stats = {
                "count": self.count,
                "busy_s": self.busy_s,
                "kinds": self.kinds,
                "connections": len(self.peers),
            }
            body = json.dumps(stats).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        started = time.perf_counter()
        self.count += 1
        self.kinds[_kind(scope["method"], scope["path"])] += 1
        if scope.get("client") and len(self.peers) < 1_000_000:
            self.peers.add(tuple(scope["client"]))
        try:
            await self.app(scope, receive, send)
        finally:
            self.busy_s += time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    from tests.nextcloud_double.__main__ import main as serve_double

    return serve_double(argv, wrap=Metered)


@dataclass(frozen=True)
class DoubleStats:
    count: int
    busy_s: float
    kinds: dict[str, int]
    connections: int  # TCP connections accepted so far

    def minus(self, before: DoubleStats) -> DoubleStats:
        kinds = {k: v - before.kinds.get(k, 0) for k, v in self.kinds.items() if v - before.kinds.get(k, 0)}
        return DoubleStats(
            self.count - before.count,
            self.busy_s - before.busy_s,
            kinds,
            self.connections - before.connections,
        )


class Double:
    """A running metered double."""

    def __init__(self, spawned: Spawned) -> None:
        self.spawned = spawned
        self.url: str = spawned.ready["url"]
        self._http = httpx.Client(timeout=10)

    @property
    def pid(self) -> int:
        return self.spawned.pid

    def stats(self) -> DoubleStats:
        data = self._http.get(self.url + STATS_PATH).json()
        return DoubleStats(
            int(data["count"]), float(data["busy_s"]), dict(data["kinds"]), int(data["connections"])
        )

    def close(self) -> None:
        self._http.close()


@contextmanager
def running_double(
    data: Path, users: Sequence[tuple[str, str]], *, idp_issuer: str | None = None, log: Path | None = None
) -> Iterator[Double]:
    """Start the metered double with `users` as (name, app password); stop it on exit."""
    args = [sys.executable, str(HERE / "_double.py"), "--data", str(data)]
    for name, app_password in users:
        args += ["--user", f"{name}:{name}-login-password:{app_password}"]
    if idp_issuer:
        args += ["--idp-issuer", idp_issuer]
    env = clean_env({"PYTHONPATH": str(ROOT)})
    with spawn(args, env=env, log=log or data / "double.log", cwd=ROOT, ready_line=True) as spawned:
        double = Double(spawned)
        try:
            yield double
        finally:
            double.close()


def seed_user(data: Path, user: str, *, notes: int, files: int, folder: str = "bench") -> None:
    """`notes` Markdown notes (Notes/note-NNN.md) and a folder of `files` small text files."""
    home = data / "files" / user
    (home / "Notes").mkdir(parents=True, exist_ok=True)
    (home / folder).mkdir(parents=True, exist_ok=True)
    paragraph = "Some words for the benchmark, a line of a typical short note. " * 4
    for i in range(notes):
        (home / "Notes" / f"note-{i:03}.md").write_text(
            f"# Note {i}\n\n{paragraph}\n- item one\n- item two\n"
        )
    for i in range(files):
        (home / folder / f"file-{i:03}.txt").write_text(f"file {i}\n" + "x" * 200 + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
