"""Multistatus parsers side by side on one real PROPFIND body (a folder listing): CPU time to turn
the body into the listing's entries, fed in 64 KiB chunks as the network delivers it. Decides
what a changed folder's listing is parsed with (issue 44, docs/ADR/0090).

    curl -X PROPFIND -H 'Depth: 1' -u alice:APP --data "$BODY" URL/remote.php/dav/files/alice/X > /tmp/x.xml
    .venv/bin/python bench/dav_parsers.py /tmp/x.xml [--repeat 5]

Candidates: the server's parser as it is (ElementTree's pull parser behind an expat guard, an
Element tree per entry, then `file_entry`); expat alone with callbacks keeping only the texts a
listing shows (`_flat_parser.py`); lxml's iterparse, when installed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nextcloud_mcp_server.nextcloud.dav.files import file_entry
from nextcloud_mcp_server.nextcloud.dav.xml import MultistatusParser

CHUNK = 64 * 1024
ROOT = "/remote.php/dav/files/alice"


def _chunks(body: bytes) -> list[bytes]:
    return [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)]


def tree_parser(body: bytes) -> list[Any]:
    parser = MultistatusParser("bench")
    out = []
    for chunk in _chunks(body):
        out += [file_entry(r, ROOT) for r in parser.feed(chunk)]
    out += [file_entry(r, ROOT) for r in parser.feed(b"", final=True)]
    return out


def flat_parser(body: bytes) -> list[Any]:
    from _flat_parser import FlatMultistatusParser

    parser = FlatMultistatusParser("bench")
    out = []
    for chunk in _chunks(body):
        out += [file_entry(r, ROOT) for r in parser.feed(chunk)]
    out += [file_entry(r, ROOT) for r in parser.feed(b"", final=True)]
    return out


def lxml_parser(body: bytes) -> list[Any]:
    from lxml import etree  # type: ignore[import-untyped]

    from nextcloud_mcp_server.nextcloud.dav.xml import _to_response

    parser = etree.XMLPullParser(
        events=("end",), tag="{DAV:}response", resolve_entities=False, no_network=True
    )
    out = []
    for chunk in _chunks(body):
        parser.feed(chunk)
        for _, element in parser.read_events():
            out.append(file_entry(_to_response(element), ROOT))
            element.clear()
    return out


def measure(name: str, fn: Callable[[bytes], list[Any]], body: bytes, repeat: int) -> tuple[float, list[Any]]:
    times = []
    result: list[Any] = []
    for _ in range(repeat):
        started = time.process_time()
        result = fn(body)
        times.append(time.process_time() - started)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("body", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    body = args.body.read_bytes()
    candidates: dict[str, Callable[[bytes], list[Any]]] = {
        "tree (as is)": tree_parser,
        "flat expat": flat_parser,
    }
    try:
        import lxml  # type: ignore[import-untyped]  # noqa: F401

        candidates["lxml iterparse"] = lxml_parser
    except ImportError:
        print("lxml not installed: left out")
    base: list[Any] | None = None
    first: float | None = None
    for name, fn in candidates.items():
        seconds, result = measure(name, fn, body, args.repeat)
        same = "" if base is None else ("same entries" if result == base else "DIFFERENT entries")
        base = result if base is None else base
        first = seconds if first is None else first
        print(
            f"{name:16} {seconds * 1000:7.0f} ms CPU  {seconds / first:5.2f}x  "
            f"{len(result)} entries ({len(body) / 1e6:.1f} MB)  {same}"
        )
    print(f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
