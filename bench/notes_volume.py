"""What one notes question costs a real Nextcloud at volume: wall time, requests, bytes and
Nextcloud's own CPU (the php-fpm pool's, from /proc), for the old and the new ways of asking.

    .venv/bin/python -m bench.notes_volume DIR            # DIR: a kit instance (nextcloud.json)
    .venv/bin/python -m bench.notes_volume DIR --seed 5000

`--seed N` first uploads N small Markdown notes into alice's Notes/<category>/ by WebDAV bulk
upload (skipped when the folder already holds that many) and lets the Notes app see them once.
Run it on the same machine as the instance: the CPU is read from the pool's processes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import httpx

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

CATEGORIES = ["", "Work", "Work/Projects", "Personal", "Recipes", "Travel"]
WORDS = [
    "project",
    "team",
    "notes",
    "call",
    "follow-up",
    "decision",
    "question",
    "answer",
    "week",
    "month",
    "year",
    "travel",
    "hotel",
    "ticket",
    "garden",
    "recipe",
    "butter",
    "flour",
    "onion",
    "budget",
    "meeting",
    "draft",
    "idea",
    "list",
    "plan",
    "review",
    "café",
]
NOTES_API = "/index.php/apps/notes/api/v1"


def php_cpu(instance: Path) -> float:
    """Seconds of CPU the instance's php-fpm pool has used (live workers and reaped ones)."""
    master = int((instance / "run" / "php-fpm.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == master:
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        elif ppid == master:
            total += int(fields[11]) + int(fields[12])
    return total / tick


class Counting(httpx.AsyncBaseTransport):
    """Counts requests and response bytes."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests = 0
        self.bytes = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        request.headers.pop("Cookie", None)  # Basic auth each time, as a careful client (no session)
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.bytes += len(body)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-encoding"]
        return httpx.Response(response.status_code, headers=headers, content=body, request=request)


def note_text(rng: random.Random, title: str) -> str:
    lines = [f"# {title}", ""]
    while sum(len(x) for x in lines) < rng.randint(300, 2500):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + ".")
    return "\n".join(lines) + "\n"


async def seed(client: httpx.AsyncClient, count: int) -> None:
    rng = random.Random(30)
    for folder in ["Notes", *(f"Notes/{c}" for c in CATEGORIES if c)]:
        await client.request("MKCOL", f"/remote.php/dav/files/alice/{folder}")
    now = int(time.time())
    items = []
    for i in range(count):
        category = rng.choice(CATEGORIES)
        title = f"Note {i:05d} {rng.choice(WORDS)}"
        path = f"Notes/{category + '/' if category else ''}{title}.md"
        items.append((path, note_text(rng, title).encode(), now - rng.randint(0, 3 * 365 * 86400)))
    batches = [items[i : i + 250] for i in range(0, len(items), 250)]
    for batch in batches:
        boundary = "seed-" + hashlib.md5(batch[0][0].encode()).hexdigest()  # noqa: S324
        body = bytearray()
        for path, content, mtime in batch:
            body += f"--{boundary}\r\nX-File-Path: /{path}\r\n".encode()
            body += f"X-File-MD5: {hashlib.md5(content).hexdigest()}\r\n".encode()  # noqa: S324
            body += f"X-File-Mtime: {mtime}\r\nContent-Length: {len(content)}\r\n\r\n".encode()
            body += content + b"\r\n"
        body += f"--{boundary}--\r\n".encode()
        answer = await client.post(
            "/remote.php/dav/bulk",
            content=bytes(body),
            headers={"Content-Type": f"multipart/related; boundary={boundary}"},
        )
        answer.raise_for_status()
    # the Notes app's first listing builds its meta table (reads every note once)
    (await client.get(f"{NOTES_API}/notes", params={"exclude": "content"}, timeout=600)).raise_for_status()


async def measure(
    name: str, instance: Path, counter: Counting, call: Callable[[], Awaitable[Any]], rounds: int
) -> dict[str, Any]:
    walls, cpus, requests, sizes, local = [], [], [], [], []
    for _ in range(rounds):
        before_requests, before_bytes = counter.requests, counter.bytes
        cpu, started, mine = php_cpu(instance), time.perf_counter(), time.process_time()
        await call()
        walls.append(time.perf_counter() - started)
        local.append(time.process_time() - mine)
        cpus.append(php_cpu(instance) - cpu)
        requests.append(counter.requests - before_requests)
        sizes.append(counter.bytes - before_bytes)
    row = {
        "what": name,
        "wall_s": round(statistics.median(walls), 3),
        "nc_cpu_s": round(statistics.median(cpus), 3),
        "local_cpu_s": round(statistics.median(local), 3),
        "requests": requests[-1],
        "bytes": sizes[-1],  # counted for the direct requests only
    }
    print(
        f"{name:58} {row['wall_s']:7.3f} s {row['nc_cpu_s']:7.3f} s NC cpu {row['local_cpu_s']:6.3f} s "
        f"local {row['requests']:4} req {row['bytes']:>9} B"
    )
    return row


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("instance", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--query", default="café budget")
    parser.add_argument(
        "--client-only", action="store_true", help="only this server's client, before and after"
    )
    args = parser.parse_args()
    info = json.loads((args.instance / "nextcloud.json").read_text())
    user, password = info["alice"]["user"], info["alice"]["app_password"]
    counter = Counting()
    raw = httpx.AsyncClient(base_url=info["url"], auth=(user, password), transport=counter, timeout=600)
    if args.seed:
        await seed(raw, args.seed)
    if not args.client_only:
        for name, call in raw_paths(raw, args.query):
            await measure(name, args.instance, counter, call, args.rounds)
    await compare_client(args, info, counter)


async def compare_client(args: argparse.Namespace, info: dict[str, Any], counter: Counting) -> None:
    """This server's Nextcloud client: the Notes API path (before ADR 0049) against the files path."""
    user, password = info["alice"]["user"], info["alice"]["app_password"]
    trace = aiohttp.TraceConfig()

    async def started(*_: Any) -> None:
        counter.requests += 1

    trace.on_request_start.append(started)
    http = NextcloudHTTP(info["url"], timeout=600, deadline=600, trace_configs=[trace])
    nc = NextcloudClient(http, BasicCredential(user, password))
    old = NotesClient(http, BasicCredential(user, password))  # without the files: the API only

    async def old_list() -> None:
        notes = await old.list_notes()
        notes.sort(key=lambda n: (-n.modified, n.id))

    async def cold(call: Callable[[], Awaitable[Any]]) -> None:
        nc.answers.forget_user(user)  # nothing kept: the first call of a process
        await call()

    edits = iter(range(1_000_000))

    async def edited_search() -> None:
        newest = (await nc.api(NotesClient).newest())[0]
        folder = f"{newest.category}/" if newest.category else ""
        path = f"/remote.php/dav/files/{user}/Notes/{folder}{newest.title}.md"
        await http.request(
            "PUT", quote(path), credential=nc.credential, content=f"edit {next(edits)} café budget\n".encode()
        )
        await nc.api(NotesClient).search(args.query)

    rows = [
        ("client: list, Notes API (before)", old_list),
        ("client: list, files (after), first call", lambda: cold(nc.api(NotesClient).newest)),
        ("client: list, files (after), repeated unchanged", nc.api(NotesClient).newest),
        (f"client: search {args.query!r}, Notes API (before)", lambda: old.search(args.query)),
        (
            f"client: search {args.query!r}, files (after), first call",
            lambda: cold(lambda: nc.api(NotesClient).search(args.query)),
        ),
        (
            f"client: search {args.query!r}, files (after), repeated",
            lambda: nc.api(NotesClient).search(args.query),
        ),
        (f"client: search {args.query!r}, files (after), one note changed (PUT included)", edited_search),
    ]
    for name, call in rows:
        await measure(name, args.instance, counter, call, args.rounds)
    a = await old.list_notes()
    a.sort(key=lambda n: (-n.modified, n.id))
    b = await nc.api(NotesClient).newest()
    same = [(n.id, n.title, n.category, n.favorite, n.modified) for n in a] == [
        (n.id, n.title, n.category, n.favorite, n.modified) for n in b
    ]
    hits_old = [h.id for h in await old.search(args.query)]
    hits_new = [h.id for h in await nc.api(NotesClient).search(args.query)]
    print(f"same listing: {same} ({len(a)} notes); same hits: {hits_old == hits_new} ({len(hits_new)})")
    await http.aclose()


def raw_paths(raw: httpx.AsyncClient, query: str) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    """The direct requests a careful client could make."""
    dav = "/remote.php/dav"
    scope = "/files/alice/Notes"

    def search_body(limit: int, props: str, where: str = "") -> str:
        return (
            '<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
            f"<d:basicsearch><d:select><d:prop>{props}</d:prop></d:select>"
            f"<d:from><d:scope><d:href>{scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>"
            f"<d:where>{where or '<d:not><d:is-collection/></d:not>'}</d:where>"
            "<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>"
            + f"<d:limit><d:nresults>{limit}</d:nresults></d:limit>"
            + "</d:basicsearch></d:searchrequest>"
        )

    props = "<oc:fileid/><d:getlastmodified/><oc:favorite/><d:getetag/>"

    async def dav_search(limit: int = 20000, p: str = props, where: str = "") -> None:
        r = await raw.request(
            "SEARCH", dav, content=search_body(limit, p, where), headers={"Content-Type": "text/xml"}
        )
        assert r.status_code == 207, (r.status_code, r.text[:300])

    async def notes(**params: Any) -> None:
        (
            await raw.get(f"{NOTES_API}/notes", params=params, headers={"Accept": "application/json"})
        ).raise_for_status()

    async def unified() -> None:
        r = await raw.get(
            "/ocs/v2.php/search/providers/notes/search",
            params={"term": query, "limit": 20},
            headers={"OCS-APIRequest": "true", "Accept": "application/json"},
        )
        r.raise_for_status()
        print("   unified entries:", len(r.json()["ocs"]["data"]["entries"]))

    async def propfind0() -> None:
        r = await raw.request(
            "PROPFIND",
            f"{dav}/files/alice/Notes",
            headers={"Depth": "0"},
            content='<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>',
        )
        assert r.status_code == 207

    favorites = "<d:eq><d:prop><oc:favorite/></d:prop><d:literal>1</d:literal></d:eq>"
    return [
        ("notes api: full listing, exclude=content", lambda: notes(exclude="content")),
        ("notes api: chunkSize=50, exclude=content", lambda: notes(exclude="content", chunkSize=50)),
        ("notes api: full listing with content", lambda: notes()),
        ("dav SEARCH newest 100 (fileid, mtime, favorite, etag)", lambda: dav_search(100)),
        ("dav SEARCH all (fileid only)", lambda: dav_search(p="<oc:fileid/>")),
        ("dav SEARCH all (fileid, mtime, favorite, etag)", lambda: dav_search()),
        ("dav SEARCH favorites (fileid)", lambda: dav_search(p="<oc:fileid/>", where=favorites)),
        ("dav PROPFIND depth 0 of Notes (etag)", propfind0),
        (f"unified search notes {query!r}", unified),
    ]


if __name__ == "__main__":
    asyncio.run(main())
