"""The notes listing with the Notes settings asked beside the listing (ADR 0094) against the order
before (the settings, then the listing), on a real Nextcloud from the kit: as the first call of
a new process (the DAV user id already discovered, as the warm-up does; nothing kept) and warm
(the listing kept). Interleaved rounds, medians, ratios per round.

    K=/work/shared/nextcloud/nextcloud   # the kit
    $K start /var/tmp/nextcloud-folder --version 34
    .venv/bin/python bench/notes_settings_beside.py /var/tmp/nextcloud-folder --notes 200 --rounds 9
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
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.toolsets.notes.client import NotesClient
from nextcloud_mcp_server.toolsets.notes.folder import listing_with_settings


async def seed(url: str, user: str, password: str, notes: int) -> None:
    async with httpx.AsyncClient(base_url=url, auth=(user, password), timeout=60) as client:
        have = len((await client.get("/index.php/apps/notes/api/v1/notes?exclude=content")).json())
        limit = asyncio.Semaphore(8)

        async def add(n: int) -> None:
            async with limit:
                body = {"title": f"note {n:04d}", "content": f"text {n}", "category": f"c{n % 7}"}
                (await client.post("/index.php/apps/notes/api/v1/notes", json=body)).raise_for_status()

        await asyncio.gather(*(add(n) for n in range(have, notes)))


async def measure(url: str, user: str, password: str, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {
        k: [] for k in ("first: beside", "first: before", "warm: beside", "warm: before")
    }
    credential = BasicCredential(user, password)
    http = NextcloudHTTP(url)
    try:
        for _ in range(rounds):
            for order in ("beside", "before"):
                cache, answers = DiscoveryCache(), KeptAnswers()
                await NextcloudClient(http, credential, cache=cache).dav_user_id()  # the warm-up's
                for when in ("first", "warm"):
                    notes = NextcloudClient(http, credential, cache=cache, answers=answers).api(NotesClient)
                    assert notes.files is not None
                    started = time.perf_counter()
                    if order == "beside":
                        _, listing = await listing_with_settings(notes.files, notes.settings)
                    else:
                        settings = await notes.settings()
                        listing = await notes.files.listing(settings.notes_path, settings.custom_suffix)
                    times[f"{when}: {order}"].append(time.perf_counter() - started)
                    assert listing.notes
    finally:
        await http.aclose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="the kit's instance directory (its nextcloud.json)")
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    config = json.loads((args.directory / "nextcloud.json").read_text())
    url, user, password = config["url"], "alice", config["alice"]["app_password"]
    asyncio.run(seed(url, user, password, args.notes))
    times = asyncio.run(measure(url, user, password, args.rounds))
    print(f"{args.notes} notes, median of {args.rounds} rounds")
    for when in ("first", "warm"):
        beside, before = times[f"{when}: beside"], times[f"{when}: before"]
        ratio = statistics.median(a / b for a, b in zip(beside, before, strict=True))
        print(
            f"  {when}: beside {statistics.median(beside) * 1000:.0f} ms, "
            f"before {statistics.median(before) * 1000:.0f} ms, ratio {ratio:.2f}"
        )
    print(f"  load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
