"""Peak memory of the server while it lists a folder of 10,000 entries and reads a 200 MiB file
page by page, over MCP (streamable HTTP) against the Nextcloud double.

The server runs as its own process (`run --transport http`) so its peak RSS (VmHWM) is its own.

    .venv/bin/python bench/dav_memory.py [--entries 10000] [--file-mib 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.mcp_clients import http_session  # noqa: E402
from tests.nextcloud_double import Account, NextcloudDouble  # noqa: E402
from tests.nextcloud_double.server import serve_in_thread  # noqa: E402
from tests.processes import free_port, wait_for_http  # noqa: E402

PASSWORD = "bench-app-password"


def rss_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


async def drive(mcp_url: str, pid: int, file_size: int, entries: int) -> dict[str, float]:
    figures: dict[str, float] = {"rss_after_start_mib": rss_kib(pid, "VmRSS:") / 1024}
    async with http_session(mcp_url) as session:
        started = time.perf_counter()
        listing = await session.call_tool("nc_webdav_list_directory", {"path": "big-folder", "limit": 1000})
        figures["list_seconds"] = time.perf_counter() - started
        assert not listing.is_error, listing.content
        assert listing.structured_content
        assert listing.structured_content["total"] == entries
        figures["peak_rss_after_listing_mib"] = rss_kib(pid, "VmHWM:") / 1024

        started, offset, pages, received = time.perf_counter(), 0, 0, 0
        while offset is not None:
            page = await session.call_tool("nc_webdav_read_file", {"path": "big.bin", "offset": offset})
            assert not page.is_error, page.content
            meta = page.structured_content or {}
            received += int(meta["length"])
            offset, pages = meta["next_offset"], pages + 1
        figures["read_seconds"] = time.perf_counter() - started
        figures["read_pages"] = pages
        assert received == file_size, (received, file_size)
        figures["peak_rss_after_read_mib"] = rss_kib(pid, "VmHWM:") / 1024
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--file-mib", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        double = NextcloudDouble(Path(tmp), [Account("bench", "login-pw", app_passwords={PASSWORD})])
        files = double.user_files("bench")
        folder = files / "big-folder"
        folder.mkdir()
        for i in range(args.entries):
            (folder / f"entry-{i:05}.txt").write_bytes(b"x")
        with open(files / "big.bin", "wb") as big:
            big.truncate(args.file_mib * 1024 * 1024)  # sparse: the disk stays small
        with serve_in_thread(double, lifespan="off") as nextcloud:
            port = free_port()
            env = {
                **os.environ,
                "NEXTCLOUD_HOST": nextcloud,
                "NEXTCLOUD_USERNAME": "bench",
                "NEXTCLOUD_PASSWORD": PASSWORD,
                "LOG_LEVEL": "WARNING",
            }
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "nextcloud_mcp_server",
                    "run",
                    "--transport",
                    "http",
                    "--port",
                    str(port),
                ],
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                wait_for_http(f"http://127.0.0.1:{port}/health", server)
                url = f"http://127.0.0.1:{port}/mcp"
                figures = asyncio.run(drive(url, server.pid, args.file_mib * 1024 * 1024, args.entries))
            finally:
                server.terminate()
                server.wait(10)
    figures |= {"entries": args.entries, "file_mib": args.file_mib}
    print(
        f"folder of {args.entries} entries listed in {figures['list_seconds']:.2f} s; "
        f"{args.file_mib} MiB read in {figures['read_pages']:.0f} pages in {figures['read_seconds']:.1f} s"
    )
    print(
        f"server RSS after start {figures['rss_after_start_mib']:.1f} MiB; peak after listing "
        f"{figures['peak_rss_after_listing_mib']:.1f} MiB; "
        f"peak after reading {figures['peak_rss_after_read_mib']:.1f} MiB "
        "(target: under 150 MiB)"
    )
    out = ROOT / "bench" / "results" / "dav_memory.json"
    out.write_text(json.dumps(figures, indent=2))
    return 0 if figures["peak_rss_after_read_mib"] < 150 else 1


if __name__ == "__main__":
    raise SystemExit(main())
