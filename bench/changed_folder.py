"""A folder that changed, listed by this server, against a plain PROPFIND of it (issue 44, ADR 0069,
0094, 0104), on a real Nextcloud from the kit. Per round, each after a file added by another
client, in an order that turns with the rounds: this server lists the folder it keeps (the listing
asked with If-Modified-Since the kept folder's mtime, the ETag only after a 304, the entries
Nextcloud sends as before taken from the kept listing); the floor, one Depth-1 PROPFIND with the
same properties, its body read whole (httpx, which keeps the session cookie Nextcloud sets, as a
browser or the desktop client does); the floor without that session; the same request through this
server's HTTP client, its body read and not parsed; and the conditional listing with every entry
built, as ADR 0094 read it. Then, on the unchanged folder: this server's listing, the ETag
question alone, the conditional listing answered 304 alone, and the parsing of the floor's body
into entries (no request). Medians of wall time, of each round's ratio to the floor, and of this
process's CPU time. The requests this server made for each changed listing are counted: 1 where the
conditional listing was answered with the folder; 2 where the kept listing was read within the
second of the folder's last change, so its ETag and the listing itself went out at once (ADR
0111; before it, 3 one after another when the change fell in that second: ADR 0109).

    K=/work/shared/nextcloud/nextcloud   # the kit
    $K start /var/tmp/nextcloud-folder --version 34
    .venv/bin/python bench/changed_folder.py /var/tmp/nextcloud-folder --files 1000 --rounds 21
    $K stop /var/tmp/nextcloud-folder
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import folder_listing
from nextcloud_mcp_server.nextcloud.dav.files import entry_key, entry_of
from nextcloud_mcp_server.nextcloud.dav.folder_listing import list_folder
from nextcloud_mcp_server.nextcloud.dav.webdav import PROPFIND_BODY, NotModified
from nextcloud_mcp_server.nextcloud.dav.xml import MultistatusParser
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers

FOLDER = "Changed"
requests: list[int] = []  # per round: what the changed listing asked of Nextcloud


async def seed(url: str, user: str, password: str, files: int) -> None:
    async with httpx.AsyncClient(base_url=url, auth=(user, password), timeout=60) as client:
        await client.request("MKCOL", f"/remote.php/dav/files/{user}/{FOLDER}")
        answer = await client.request(
            "PROPFIND", f"/remote.php/dav/files/{user}/{FOLDER}", headers={"Depth": "1"}
        )
        have = answer.text.count("<d:response>") - 1
        limit = asyncio.Semaphore(8)

        async def put(n: int) -> None:
            async with limit:
                path = f"/remote.php/dav/files/{user}/{FOLDER}/file-{n:05d}.txt"
                (await client.put(path, content=f"file {n}".encode())).raise_for_status()

        await asyncio.gather(*(put(n) for n in range(max(have, 0), files)))


class _Rows:
    """Wall time and this process's CPU time of each row, per round."""

    def __init__(self, names: list[str]) -> None:
        self.wall: dict[str, list[float]] = {name: [] for name in names}
        self.cpu: dict[str, list[float]] = {name: [] for name in names}

    async def time(self, name: str, call: Callable[[], Awaitable[object]]) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        await call()
        self.wall[name].append(time.perf_counter() - wall)
        self.cpu[name].append(time.process_time() - cpu)


CHANGED, UNCHANGED, FLOOR = "changed (this server)", "unchanged (this server)", "plain PROPFIND"
SESSIONLESS = "plain PROPFIND, no Nextcloud session"
STACK, NO_REUSE = "the HTTP stack alone, body unparsed", "changed, kept entries not reused"
ETAG, NOT_MODIFIED, PARSING = (
    "the ETag question alone",
    "the listing answered 304 alone",
    "parsing the floor's body",
)


async def measure(url: str, user: str, password: str, rounds: int) -> _Rows:
    requests.clear()
    rows = _Rows([CHANGED, UNCHANGED, FLOOR, SESSIONLESS, STACK, NO_REUSE, ETAG, NOT_MODIFIED, PARSING])
    http = NextcloudHTTP(url)
    made: list[str] = []
    stream = http.stream

    def counted(method: str, path: str, **kwargs: Any) -> Any:
        made.append(method)
        return stream(method, path, **kwargs)

    http.stream = counted  # type: ignore[method-assign]
    answers = KeptAnswers()
    other = httpx.AsyncClient(base_url=url, auth=(user, password), timeout=60)
    credential = BasicCredential(user, password)
    folder = f"/remote.php/dav/files/{user}/{FOLDER}"
    listing_headers = {"Depth": "1", "Content-Type": "application/xml"}
    body = b""
    total = 0

    async def add() -> None:
        nonlocal total
        (await other.put(f"{folder}/added-{time.time_ns()}.txt", content=b"new")).raise_for_status()
        total += 1

    try:
        files = await NextcloudClient(http, credential).files()
        total = (await list_folder(files, FOLDER, top=50, answers=answers)).total  # kept, as a server has it
        long_ago = datetime.now(UTC) - timedelta(days=1)

        async def changed() -> None:
            made.clear()
            listing = await list_folder(files, FOLDER, top=50, answers=answers)
            requests.append(len(made))
            assert not listing.reused
            assert listing.total == total, (listing.total, total)  # every added file is seen

        async def floor() -> None:
            nonlocal body
            answer = await other.request("PROPFIND", folder, headers=listing_headers, content=PROPFIND_BODY)
            body = answer.read()
            assert answer.status_code == 207

        async def sessionless() -> None:  # the floor's request without the session cookie it was given
            other.cookies.clear()
            await floor()
            other.cookies.clear()

        async def stack() -> None:  # this server's HTTP client, the floor's request, nothing parsed
            async with http.stream(
                "PROPFIND",
                folder,
                credential=credential,
                headers=listing_headers,
                content=PROPFIND_BODY.encode(),
            ) as answer:
                async for _ in answer.aiter_bytes():
                    pass

        async def no_reuse() -> None:  # the conditional listing as ADR 0094 read it: every entry built
            alone = await folder_listing._read(
                files, FOLDER, "", top=50, answers=None, progress=None, since=long_ago
            )
            assert alone.total == total

        changes: list[tuple[str, Callable[[], Awaitable[object]]]] = [
            (CHANGED, changed),
            (FLOOR, floor),
            (SESSIONLESS, sessionless),
            (STACK, stack),
            (NO_REUSE, no_reuse),
        ]
        for n in range(rounds):
            # each after a file added by another client, in an order that turns with the rounds
            for name, call in changes[n % len(changes) :] + changes[: n % len(changes)]:
                await add()
                await rows.time(name, call)

            async def unchanged() -> None:
                assert (await list_folder(files, FOLDER, top=50, answers=answers)).reused

            async def etag() -> None:
                await files.current_etag(FOLDER)

            async def not_modified() -> None:
                try:
                    async for _ in files.iter_directory(FOLDER, modified_since=datetime.now(UTC)):
                        raise AssertionError("an unchanged folder's listing was sent whole")
                except NotModified:
                    pass

            async def parsing() -> None:
                parser = MultistatusParser("bench", entry_key)
                entries = [entry_of(key, files.root) for key in parser.feed(body, final=True)]
                assert len(entries) > 1  # the folder itself and its entries

            await list_folder(files, FOLDER, top=50, answers=answers)  # kept again, as it is now
            for name, call in (
                (UNCHANGED, unchanged),
                (ETAG, etag),
                (NOT_MODIFIED, not_modified),
                (PARSING, parsing),
            ):
                await rows.time(name, call)
            print(
                f"round {n + 1}: "
                + ", ".join(
                    f"{k} {v[-1] * 1000:.0f} ms ({rows.cpu[k][-1] * 1000:.0f} CPU)"
                    for k, v in rows.wall.items()
                ),
                flush=True,
            )
    finally:
        await other.aclose()
        await http.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="the kit's instance directory (its nextcloud.json)")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    config = json.loads((args.directory / "nextcloud.json").read_text())
    url, user, password = config["url"], "alice", config["alice"]["app_password"]
    asyncio.run(seed(url, user, password, args.files))
    print(f"  load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    # what this process imported lives as long as it, out of the garbage collector's sight, as in
    # the server, which freezes its heap once started and once warmed up (ADR 0031, 0113)
    gc.freeze()
    rows = asyncio.run(measure(url, user, password, args.rounds))
    floors = rows.wall[FLOOR]
    print(
        f"{args.files} files, median of {args.rounds} rounds; ratio: the median of each round's ratio; "
        "CPU: this process's, median"
    )
    for name, values in rows.wall.items():
        median = statistics.median(values)
        ratio = statistics.median(v / f for v, f in zip(values, floors, strict=True))
        used = statistics.median(rows.cpu[name])
        print(
            f"  {name:<38} {median * 1000:7.0f} ms  {ratio:5.2f}x the plain PROPFIND"
            f"   CPU {used * 1000:5.1f} ms"
        )
    print(f"  requests per changed listing, by round: {requests}")
    print(f"  load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
