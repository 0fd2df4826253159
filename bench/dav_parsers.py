"""Multistatus parsers side by side on one real PROPFIND body (a folder listing): CPU time to turn
the body into the listing's entries, fed in 64 KiB chunks as the network delivers it. Decides
what a changed folder's listing is parsed with (issue 44, docs/ADR/0090).

    curl -X PROPFIND -H 'Depth: 1' -u alice:APP --data "$BODY" URL/remote.php/dav/files/alice/X > /tmp/x.xml
    .venv/bin/python bench/dav_parsers.py /tmp/x.xml [--repeat 5]

Candidates: the server's parser as it is (ElementTree's pull parser behind an expat guard, an
Element tree per entry, its `EntryKey` read straight from the element, then `entry_of`; ADR
0110); the same tree read through a `DavResponse` first (as before ADR 0110); expat alone with
callbacks keeping only the texts a listing shows (`_flat_parser.py`); lxml's iterparse, when
installed.
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

from nextcloud_mcp_server.nextcloud.dav.files import EntryKey, entry_key, entry_of
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, OC, DavResponse, MultistatusParser, to_response

CHUNK = 64 * 1024
ROOT = "/remote.php/dav/files/alice"


def _chunks(body: bytes) -> list[bytes]:
    return [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)]


def _response_key(item: DavResponse) -> EntryKey:
    """An entry's key read from a `DavResponse` (the way before ADR 0110)."""
    kinds = item.children(f"{{{DAV}}}resourcetype")
    names = (f"{{{OC}}}size", f"{{{DAV}}}getcontentlength", f"{{{DAV}}}getlastmodified")
    more = (f"{{{DAV}}}getetag", f"{{{DAV}}}getcontenttype", f"{{{OC}}}fileid")
    size, length, modified, etag, mime, file_id = (item.text(n) for n in (*names, *more))
    return (item.href, f"{{{DAV}}}collection" in kinds, size, length, modified, etag, mime, file_id)


def _entry(item: DavResponse) -> Any:
    return entry_of(_response_key(item), ROOT)


def tree_parser(body: bytes) -> list[Any]:
    parser = MultistatusParser("bench", entry_key)
    out = []
    for chunk in _chunks(body):
        out += [entry_of(k, ROOT) for k in parser.feed(chunk)]
    out += [entry_of(k, ROOT) for k in parser.feed(b"", final=True)]
    return out


def response_parser(body: bytes) -> list[Any]:
    parser = MultistatusParser("bench", to_response)
    out = []
    for chunk in _chunks(body):
        out += [_entry(r) for r in parser.feed(chunk)]
    out += [_entry(r) for r in parser.feed(b"", final=True)]
    return out


def flat_parser(body: bytes) -> list[Any]:
    from _flat_parser import FlatMultistatusParser

    parser = FlatMultistatusParser("bench")
    out = []
    for chunk in _chunks(body):
        out += [_entry(r) for r in parser.feed(chunk)]
    out += [_entry(r) for r in parser.feed(b"", final=True)]
    return out


def lxml_parser(body: bytes) -> list[Any]:
    from lxml import etree  # type: ignore[import-untyped]

    parser = etree.XMLPullParser(
        events=("end",), tag="{DAV:}response", resolve_entities=False, no_network=True
    )
    out = []
    for chunk in _chunks(body):
        parser.feed(chunk)
        for _, element in parser.read_events():
            out.append(entry_of(entry_key(element), ROOT))
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
        "tree, DavResponse": response_parser,
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
