"""A folder that changed, listed by this server, against a plain PROPFIND of it (issue 44, ADR
0069), on a real Nextcloud from the kit. Per round: a file is added by another client, then
this server lists the folder (the kept listing's ETag check, then the full read it needs), the
same again unchanged (the ETag check alone), and the floor: one Depth-1 PROPFIND with the same
properties, its body read whole. Interleaved rounds, medians.

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
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav.folder_listing import list_folder
from nextcloud_mcp_server.nextcloud.dav.webdav import PROPFIND_BODY
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers

FOLDER = "Changed"


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
    times: dict[str, list[float]] = {
        "changed (this server)": [],
        "unchanged (this server)": [],
        "plain PROPFIND": [],
    }
    http = NextcloudHTTP(url)
    answers = KeptAnswers()
    other = httpx.AsyncClient(base_url=url, auth=(user, password), timeout=60)
    try:
        files = await NextcloudClient(http, BasicCredential(user, password)).files()
        total = (await list_folder(files, FOLDER, top=50, answers=answers)).total  # kept, as a server has it
        for n in range(rounds):
            added = f"/remote.php/dav/files/{user}/{FOLDER}/added-{time.time_ns()}.txt"
            (await other.put(added, content=b"new")).raise_for_status()
            started = time.perf_counter()
            listing = await list_folder(files, FOLDER, top=50, answers=answers)
            times["changed (this server)"].append(time.perf_counter() - started)
            assert not listing.reused
            assert listing.total == total + 1, (listing.total, total)  # the new file is seen
            total = listing.total
            started = time.perf_counter()
            again = await list_folder(files, FOLDER, top=50, answers=answers)
            times["unchanged (this server)"].append(time.perf_counter() - started)
            assert again.reused
            started = time.perf_counter()
            floor = await other.request(
                "PROPFIND",
                f"/remote.php/dav/files/{user}/{FOLDER}",
                headers={"Depth": "1", "Content-Type": "application/xml"},
                content=PROPFIND_BODY,
            )
            floor.read()
            times["plain PROPFIND"].append(time.perf_counter() - started)
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
    floor = statistics.median(times["plain PROPFIND"])
    print(f"{args.files} files, median of {args.rounds} rounds")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<26} {median * 1000:7.0f} ms  {median / floor:5.2f}x the plain PROPFIND")


if __name__ == "__main__":
    main()
