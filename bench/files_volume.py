"""Files, contacts, unified search and sharing at volume, on a real Nextcloud (issue 30).

    .venv/bin/python bench/files_volume_seed.py /var/tmp/nextcloud-i30-files   # once
    .venv/bin/python bench/files_volume.py /var/tmp/nextcloud-i30-files [--rounds 5] [--base REF]

Prints, per case, the median wall time, Nextcloud requests and bytes sent (from nginx's access
log) and Nextcloud's CPU (php-fpm and nginx processes of the instance, from /proc):
- "floor" rows: the cheapest direct requests a careful client makes for the same answer (httpx,
  keep-alive, the instance's app password), and the requests this server made before (`old`);
- "tool" rows: the MCP tool called through the SDK's client over stdio, for this checkout (`new`)
  and for the commit `--base` (default: main), run from a `git archive` of it with PYTHONPATH.
Rounds are interleaved (each round runs every case once), so load drifts hit all alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")
DAV = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
OLD_PROPS = (
    "<d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><d:getcontentlength/>"
    "<oc:fileid/><oc:size/>"
)
NEW_PROPS = "<d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><oc:size/>"
CARD = "urn:ietf:params:xml:ns:carddav"


def propfind(props: str) -> str:
    return f"{DAV}<d:prop>{props}</d:prop></d:propfind>"


def search_body(user: str, props: str, term: str, order: bool) -> str:
    orderby = (
        "<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>"
        if order
        else "<d:orderby/>"
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
        f"<d:basicsearch><d:select><d:prop>{props}</d:prop></d:select>"
        f"<d:from><d:scope><d:href>/files/{user}</d:href><d:depth>infinity</d:depth></d:scope></d:from>"
        f"<d:where><d:like><d:prop><d:displayname/></d:prop><d:literal>%{term}%</d:literal></d:like></d:where>"
        f"{orderby}<d:limit><d:nresults>50</d:nresults></d:limit></d:basicsearch></d:searchrequest>"
    )


def card_query(text: str, limit: int, partial: bool) -> str:
    props = ("FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "CATEGORIES")
    filters = "".join(
        f'<c:prop-filter name="{p}"><c:text-match collation="i;unicode-casemap" match-type="contains">'
        f"{text}</c:text-match></c:prop-filter>"
        for p in props
    )
    shown = [
        "FN",
        "N",
        "NICKNAME",
        "EMAIL",
        "TEL",
        "ORG",
        "TITLE",
        "CATEGORIES",
        "NOTE",
        "BDAY",
        "ADR",
        "URL",
        "UID",
        "VERSION",
    ]
    data = (
        "<c:address-data>" + "".join(f'<c:prop name="{p}"/>' for p in shown) + "</c:address-data>"
        '<nc:has-photo xmlns:nc="http://nextcloud.com/ns"/>'
        if partial
        else "<c:address-data/>"
    )
    return (
        f'<?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="{CARD}">'
        f'<d:prop><d:getetag/>{data}</d:prop><c:filter test="anyof">{filters}</c:filter>'
        f"<c:limit><c:nresults>{limit}</c:nresults></c:limit></c:addressbook-query>"
    )


class Meter:
    """Nextcloud's side of one call: requests and bytes (nginx access log), CPU (/proc)."""

    def __init__(self, directory: Path) -> None:
        self.log = directory / "log" / "nginx-access.log"
        self.masters = [
            int((directory / "run" / name).read_text().strip()) for name in ("php-fpm.pid", "nginx.pid")
        ]

    def _pids(self) -> list[int]:
        found = list(self.masters)
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rpartition(")")[2].split()[1]) in self.masters:
                    found.append(int(entry))
        return found

    def cpu(self) -> float:
        total = 0
        for pid in self._pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / CLK_TCK

    def log_size(self) -> int:
        return self.log.stat().st_size

    def requests_since(self, offset: int) -> tuple[int, int]:
        with self.log.open("rb") as f:
            f.seek(offset)
            lines = f.read().decode(errors="replace").splitlines()
        sent = 0
        for line in lines:
            parts = line.split('"')
            if len(parts) > 2:
                fields = parts[2].split()
                sent += int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
        return len(lines), sent


async def measure(meter: Meter, call: Callable[[], Awaitable[Any]]) -> dict[str, float]:
    offset, cpu, start = meter.log_size(), meter.cpu(), time.perf_counter()
    await call()
    wall = time.perf_counter() - start
    await asyncio.sleep(0.05)  # nginx writes the log line after the answer
    requests, sent = meter.requests_since(offset)
    return {"wall": wall, "cpu": meter.cpu() - cpu, "requests": requests, "bytes": sent}


def floor_cases(client: httpx.AsyncClient, user: str, book: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    dav = f"/remote.php/dav/files/{user}"

    def req(method: str, url: str, body: str | None = None, depth: str | None = None, **kw: Any) -> Any:
        headers = {"Depth": depth} if depth else {}
        if body:
            headers["Content-Type"] = "text/xml; charset=utf-8"
        headers.update(kw.pop("headers", {}))

        async def run() -> None:
            r = await client.request(method, url, content=body, headers=headers, **kw)
            r.raise_for_status()

        return run

    ocs = {"OCS-APIRequest": "true", "Accept": "application/json"}
    home = f"/remote.php/dav/addressbooks/users/{user}/"
    books_body = propfind("<d:resourcetype/>")

    async def every_book() -> None:
        """What a client does to search all the user's address books: list them, ask each."""
        listing = await client.request("PROPFIND", home, content=books_body, headers={"Depth": "1"})
        listing.raise_for_status()
        hrefs = [h for h in re.findall(r"<d:href>([^<]+)</d:href>", listing.text) if h != home]
        query = card_query("Anna", 26, True)
        answers = await asyncio.gather(
            *(client.request("REPORT", h, content=query, headers={"Depth": "1"}) for h in hrefs)
        )
        for answer in answers:
            answer.raise_for_status()

    return {
        "list Big (10,000) old props": req("PROPFIND", f"{dav}/Big/", propfind(OLD_PROPS), "1"),
        "list Big (10,000) floor": req("PROPFIND", f"{dav}/Big/", propfind(NEW_PROPS), "1"),
        "list Small (20) old props": req("PROPFIND", f"{dav}/Small/", propfind(OLD_PROPS), "1"),
        "list Small (20) floor": req("PROPFIND", f"{dav}/Small/", propfind(NEW_PROPS), "1"),
        "revalidate Big: depth-0 getetag": req("PROPFIND", f"{dav}/Big/", propfind("<d:getetag/>"), "0"),
        "search name old (no order)": req(
            "SEARCH", "/remote.php/dav/", search_body(user, OLD_PROPS, "garden-0", False)
        ),
        "search name floor (newest first)": req(
            "SEARCH", "/remote.php/dav/", search_body(user, NEW_PROPS, "garden-0", True)
        ),
        "contacts 'Anna' old (whole cards)": req("REPORT", book, card_query("Anna", 26, False), "1"),
        "contacts 'Anna' floor (shown props)": req("REPORT", book, card_query("Anna", 26, True), "1"),
        "contacts 'Anna' floor, every book": every_book,
        "contact GET (with photo)": req("GET", f"{book}seed-0000.vcf"),
        "unified search files 'garden-0'": req(
            "GET",
            "/ocs/v2.php/search/providers/files/search",
            params={"term": "garden-0", "limit": 10, "format": "json"},
            headers=ocs,
        ),
        "shares: mine": req(
            "GET", "/ocs/v2.php/apps/files_sharing/api/v1/shares", params={"format": "json"}, headers=ocs
        ),
    }


TOOLS: list[tuple[str, str, dict[str, Any]]] = [
    # before this case each round changes Big (a file added or removed), so it is read whole
    ("list Big (10,000), changed", "nc_webdav_list_directory", {"path": "Big"}),
    ("list Big again (unchanged)", "nc_webdav_list_directory", {"path": "Big"}),
    ("list Big page 10", "nc_webdav_list_directory", {"path": "Big", "offset": 9000, "limit": 1000}),
    ("list Small (20)", "nc_webdav_list_directory", {"path": "Small"}),
    ("search files 'garden-0'", "nc_webdav_search_files", {"name_pattern": "garden-0"}),
    ("contacts search 'Anna' (all books)", "nc_contacts_search", {"query": "Anna"}),
    ("contacts get (photo)", "nc_contacts_get_contact", {"uid": "seed-0000"}),
    ("unified search 'garden-0'", "nc_search", {"term": "garden-0", "providers": ["files"]}),
    ("shares: mine", "nc_share_list", {}),
]


# The PyPI package's tools for the same answers (it has no get-contact or unified search tool).
PUBLISHED: dict[str, tuple[str, dict[str, Any]]] = {
    "list Big (10,000), changed": ("nc_webdav_list_directory", {"path": "Big"}),
    "list Big again (unchanged)": ("nc_webdav_list_directory", {"path": "Big"}),
    "list Small (20)": ("nc_webdav_list_directory", {"path": "Small"}),
    "search files 'garden-0'": ("nc_webdav_search_files", {"name_pattern": "%garden-0%"}),
    "contacts search 'Anna' (all books)": ("nc_contacts_search_contacts", {"query": "Anna"}),
    "shares: mine": ("nc_share_list", {}),
}


async def published_session(stack: AsyncExitStack, config: dict[str, Any], venv: Path) -> ClientSession:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXTCLOUD_", "MCP_", "OIDC_"))}
    env |= {
        "NEXTCLOUD_HOST": config["url"],
        "NEXTCLOUD_USERNAME": config["alice"]["user"],
        "NEXTCLOUD_PASSWORD": config["alice"]["app_password"],
        "LOG_LEVEL": "WARNING",
        "METRICS_ENABLED": "false",
        "ENABLE_SEMANTIC_SEARCH": "false",
        "ENABLE_BACKGROUND_OPERATIONS": "false",
    }
    work = tempfile.mkdtemp(prefix="files-volume-published-")
    env["TOKEN_STORAGE_DB"] = f"{work}/tokens.db"
    params = StdioServerParameters(
        command=str(venv / "bin" / "nextcloud-mcp-server"),
        args=["run", "--transport", "stdio"],
        env=env,
        cwd=work,
    )
    errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (closed by the stack)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def checked_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> None:
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool}: {result.content}")


async def tool_session(
    stack: AsyncExitStack, config: dict[str, Any], pythonpath: str | None
) -> ClientSession:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXTCLOUD_", "MCP_", "OIDC_"))}
    env |= {
        "NEXTCLOUD_HOST": config["url"],
        "NEXTCLOUD_USERNAME": config["alice"]["user"],
        "NEXTCLOUD_PASSWORD": config["alice"]["app_password"],
        "NEXTCLOUD_MCP_TOOLSETS": "all",
        "LOG_LEVEL": "WARNING",
    }
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "nextcloud_mcp_server", "run"], env=env, cwd=tempfile.gettempdir()
    )
    errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (closed by the stack)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def base_tree(ref: str) -> str:
    target = Path(tempfile.mkdtemp(prefix="files-volume-base-"))
    git, tar = shutil.which("git") or "git", shutil.which("tar") or "tar"
    archive = subprocess.run([git, "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run([tar, "-x", "-C", str(target)], input=archive, check=True)
    return str(target)


def table(title: str, rows: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    print(f"\n{title}")
    print(f"{'case':44} {'wall s':>8} {'NC CPU s':>9} {'req':>4} {'KiB':>8}")
    out = {}
    for name, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "requests", "bytes")}
        out[name] = med
        kib = med["bytes"] / 1024
        print(f"{name:44} {med['wall']:8.3f} {med['cpu']:9.3f} {med['requests']:4.0f} {kib:8.1f}")
    return out


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", default="main", help="git ref of the 'old' server (default main)")
    parser.add_argument("--skip-tools", action="store_true")
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    parser.add_argument(
        "--published-venv",
        type=Path,
        default=ROOT / "bench" / ".published-venv",
        help="a venv with the PyPI package (bench/published.py installs one); skipped if absent",
    )
    args = parser.parse_args()
    config = json.loads((args.dir / "nextcloud.json").read_text())
    meter = Meter(args.dir)
    user = config["alice"]["user"]
    book = f"/remote.php/dav/addressbooks/users/{user}/contacts/"
    auth = (user, config["alice"]["app_password"])
    results: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=config["url"], auth=auth, timeout=120) as client:
        cases = {k: v for k, v in floor_cases(client, user, book).items() if args.only in k}
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, call in cases.items():
                rows[name].append(await measure(meter, call))
        results["floor"] = table("direct requests (floor, and this server's requests before)", rows)
    if not args.skip_tools:
        base = base_tree(args.base)
        big = f"/remote.php/dav/files/{user}/Big/zz-bench-change.txt"
        async with AsyncExitStack() as stack, httpx.AsyncClient(base_url=config["url"], auth=auth) as dav:
            sessions = {
                f"old ({args.base})": await tool_session(stack, config, base),
                "new (this checkout)": await tool_session(stack, config, None),
            }
            if (args.published_venv / "bin" / "nextcloud-mcp-server").exists():
                sessions["PyPI 0.202.1"] = await published_session(stack, config, args.published_venv)
            tool_rows: dict[str, list[dict[str, float]]] = {}
            present = False

            async def change_big() -> None:
                """Add or remove one file in Big (outside the measured call): Big has changed."""
                nonlocal present
                (await (dav.delete(big) if present else dav.put(big, content=b"x"))).raise_for_status()
                present = not present

            for _ in range(args.rounds):
                for label, session in sessions.items():
                    for name, tool, arguments in TOOLS:
                        if args.only not in name:
                            continue
                        if label.startswith("PyPI"):
                            if name not in PUBLISHED:
                                continue
                            tool, arguments = PUBLISHED[name]
                        if name == TOOLS[0][0]:
                            await change_big()
                        row = tool_rows.setdefault(f"{label}: {name}", [])
                        row.append(await measure(meter, partial(checked_call, session, tool, arguments)))
            if present:
                await change_big()
            results["tools"] = table("tools over MCP (stdio)", tool_rows)
    out = ROOT / "bench" / "results" / "files_volume.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"\nwritten {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
