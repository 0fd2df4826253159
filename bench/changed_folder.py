"""A folder that changed, listed by this server, against a plain PROPFIND of it (issue 44, ADR
0069, 0094), on a real Nextcloud from the kit. Per round: a file is added by another client, then
this server lists the folder (the kept listing's ETag question beside the listing asked with
If-Modified-Since), the same again unchanged; another file is added, then the floor: one Depth-1
PROPFIND with the same properties, its body read whole. Beside them, for where the time goes:
the order before ADR 0094 (after another added file: the ETag question, then the listing), the
listing asked alone with If-Modified-Since after another added file (no ETag question), the
ETag question alone, the conditional listing answered 304 alone, and the parsing of the floor's
body into entries (CPU in this process, no request). Each listing of a changed folder comes right
after a change, as the floor's does. Interleaved rounds, medians; ratios per round, then their
median. The requests this server made for each changed listing are counted: 3 where Nextcloud
answered the conditional listing 304 (the folder's mtime had not moved past the kept one's, a
change within the same second) and the folder was read again.

    K=/work/shared/nextcloud/nextcloud   # the kit
    $K start /var/tmp/nextcloud-folder --version 34
    .venv/bin/python bench/changed_folder.py /var/tmp/nextcloud-folder --files 2000 --rounds 7
    $K stop /var/tmp/nextcloud-folder
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import folder_listing
from nextcloud_mcp_server.nextcloud.dav.files import file_entry
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


async def measure(url: str, user: str, password: str, rounds: int) -> dict[str, list[float]]:
    requests.clear()
    times: dict[str, list[float]] = {
        "changed (this server)": [],
        "unchanged (this server)": [],
        "plain PROPFIND": [],
        "changed, before: ETag then listing": [],
        "changed: the conditional listing alone": [],
        "the ETag question alone": [],
        "the listing answered 304 alone": [],
        "parsing the floor's body (CPU)": [],
    }
    http = NextcloudHTTP(url)
    made: list[str] = []
    stream = http.stream

    def counted(method: str, path: str, **kwargs: Any) -> Any:
        made.append(method)
        return stream(method, path, **kwargs)

    http.stream = counted  # type: ignore[method-assign]
    answers = KeptAnswers()
    other = httpx.AsyncClient(base_url=url, auth=(user, password), timeout=60)

    async def add() -> None:
        added = f"/remote.php/dav/files/{user}/{FOLDER}/added-{time.time_ns()}.txt"
        (await other.put(added, content=b"new")).raise_for_status()

    try:
        files = await NextcloudClient(http, BasicCredential(user, password)).files()
        total = (await list_folder(files, FOLDER, top=50, answers=answers)).total  # kept, as a server has it
        for n in range(rounds):
            await add()
            made.clear()
            started = time.perf_counter()
            listing = await list_folder(files, FOLDER, top=50, answers=answers)
            times["changed (this server)"].append(time.perf_counter() - started)
            requests.append(len(made))
            assert not listing.reused
            assert listing.total == total + 1, (listing.total, total)  # the new file is seen
            total = listing.total
            started = time.perf_counter()
            again = await list_folder(files, FOLDER, top=50, answers=answers)
            times["unchanged (this server)"].append(time.perf_counter() - started)
            assert again.reused
            await add()
            total += 1
            started = time.perf_counter()
            floor = await other.request(
                "PROPFIND",
                f"/remote.php/dav/files/{user}/{FOLDER}",
                headers={"Depth": "1", "Content-Type": "application/xml"},
                content=PROPFIND_BODY,
            )
            body = floor.read()
            times["plain PROPFIND"].append(time.perf_counter() - started)
            await add()
            started = time.perf_counter()
            await files.current_etag(FOLDER)
            before = await list_folder(files, FOLDER, top=50)
            modified = before.itself.modified
            assert modified is not None
            times["changed, before: ETag then listing"].append(time.perf_counter() - started)
            assert before.total == total + 1
            total = before.total
            await add()
            total += 1
            started = time.perf_counter()
            alone = await folder_listing._read(
                files, FOLDER, "", top=50, answers=None, progress=None, since=modified - timedelta(hours=1)
            )
            times["changed: the conditional listing alone"].append(time.perf_counter() - started)
            assert alone.total == total
            started = time.perf_counter()
            await files.current_etag(FOLDER)
            times["the ETag question alone"].append(time.perf_counter() - started)
            started = time.perf_counter()
            try:
                async for _ in files.iter_directory(FOLDER, modified_since=alone.itself.modified):
                    raise AssertionError("an unchanged folder's listing was sent whole")
            except NotModified:
                pass
            times["the listing answered 304 alone"].append(time.perf_counter() - started)
            started = time.process_time()
            parser = MultistatusParser("bench")
            entries = [file_entry(item, files.root) for item in parser.feed(body, final=True)]
            times["parsing the floor's body (CPU)"].append(time.process_time() - started)
            assert len(entries) == total - 1  # the folder itself and its entries before the two last adds
            print(
                f"round {n + 1}: " + ", ".join(f"{k} {v[-1] * 1000:.0f} ms" for k, v in times.items()),
                flush=True,
            )
    finally:
        await other.aclose()
        await http.aclose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="the kit's instance directory (its nextcloud.json)")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    config = json.loads((args.directory / "nextcloud.json").read_text())
    url, user, password = config["url"], "alice", config["alice"]["app_password"]
    asyncio.run(seed(url, user, password, args.files))
    times = asyncio.run(measure(url, user, password, args.rounds))
    floors = times["plain PROPFIND"]
    print(f"{args.files} files, median of {args.rounds} rounds; ratio: the median of each round's ratio")
    for name, values in times.items():
        median = statistics.median(values)
        ratio = statistics.median(v / f for v, f in zip(values, floors, strict=True))
        print(f"  {name:<36} {median * 1000:7.0f} ms  {ratio:5.2f}x the plain PROPFIND")
    print(f"  requests per changed listing, by round: {requests}")
    print(f"  load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
