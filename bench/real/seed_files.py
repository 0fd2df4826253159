"""The seed's notes and files: written straight into the instance's data directory, then indexed by
`occ files:scan`: Nextcloud's own way of taking files that arrived on its disk (an admin's rsync,
an external tool). The same paths, contents and modification times as the WebDAV bulk upload, in
minutes instead of most of an hour: a bulk request still costs Nextcloud a file-cache write and
events per file over HTTP, with SQLite taking one writer at a time.

What differs from an upload: no MD5 checksum is recorded in the file cache (the bulk upload
passes one; nothing measured reads it), and the folders' own modification times are the time of
writing. File ids and ETags are assigned by Nextcloud either way.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pwd
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path

import httpx

__all__ = ["bulk_upload", "check", "gather_limited", "mkcols", "scan", "write_tree"]


def write_tree(data_dir: Path, user: str, items: Iterable[tuple[str, bytes, int]]) -> int:
    """Write each (path under the user's files, content, mtime) below DATA/USER/files, owned by
    the web server's user as Nextcloud's own files are; return how many were written."""
    web = pwd.getpwnam("www-data")
    root = data_dir / user / "files"
    made: set[Path] = set()
    count = 0
    for path, content, mtime in items:
        target = root / path
        if target.parent not in made:
            missing = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
            target.parent.mkdir(parents=True, exist_ok=True)
            for folder in missing:
                os.chown(folder, web.pw_uid, web.pw_gid)
            made.add(target.parent)
        target.write_bytes(content)
        os.chown(target, web.pw_uid, web.pw_gid)
        os.utime(target, (mtime, mtime))
        count += 1
    return count


def scan(occ: Callable[..., str], instance_dir: Path, user: str) -> float:
    """`occ files:scan` of the user's files; return its seconds."""
    started = time.monotonic()
    occ("occ", str(instance_dir), "files:scan", "--path", f"/{user}/files", "--no-interaction")
    return time.monotonic() - started


async def gather_limited(jobs: Iterable[Callable[[], Awaitable[None]]], limit: int) -> None:
    queue = list(jobs)
    queue.reverse()

    async def worker() -> None:
        while queue:
            await queue.pop()()

    await asyncio.gather(*(worker() for _ in range(limit)))


def check(response: httpx.Response, *ok: int) -> httpx.Response:
    if response.status_code not in ok:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:300]}"
        )
    return response


async def mkcols(client: httpx.AsyncClient, files_root: str, folders: Iterable[str]) -> None:
    wanted: set[str] = set()
    for folder in folders:
        parts = folder.split("/")
        wanted.update("/".join(parts[: i + 1]) for i in range(len(parts)))

    async def mkcol(folder: str) -> None:
        check(await client.request("MKCOL", f"{files_root}/{folder}"), 201, 405)

    for depth in sorted({f.count("/") for f in wanted}):  # parents first, siblings 4 at a time
        level = sorted(f for f in wanted if f.count("/") == depth)
        await gather_limited([lambda f=f: mkcol(f) for f in level], 4)  # type: ignore[misc]


async def bulk_upload(
    client: httpx.AsyncClient, items: Sequence[tuple[str, bytes, int]], batch: int, limit: int
) -> None:
    """POST /remote.php/dav/bulk (multipart/related), `batch` files a request, `limit` at a time."""

    async def send(chunk: Sequence[tuple[str, bytes, int]]) -> None:
        boundary = "bench-" + hashlib.md5(chunk[0][0].encode()).hexdigest()  # noqa: S324 (a name)
        body = bytearray()
        for path, content, mtime in chunk:
            body += f"--{boundary}\r\n".encode()
            body += f"X-File-Path: /{path}\r\nX-File-MD5: {hashlib.md5(content).hexdigest()}\r\n".encode()  # noqa: S324
            body += f"X-File-Mtime: {mtime}\r\nContent-Length: {len(content)}\r\n\r\n".encode()
            body += content + b"\r\n"
        body += f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/related; boundary={boundary}"}
        answer = check(
            await client.post("/remote.php/dav/bulk", content=bytes(body), headers=headers), 200
        ).json()
        failed = [p for p, r in answer.items() if r.get("error")]
        if failed:
            raise RuntimeError(f"bulk upload refused {len(failed)} files, e.g. {failed[:3]}")

    chunks = [items[i : i + batch] for i in range(0, len(items), batch)]
    await gather_limited([lambda c=c: send(c) for c in chunks], limit)  # type: ignore[misc]
