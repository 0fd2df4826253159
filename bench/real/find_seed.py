"""Seed a real Nextcloud of the kit with the find benchmark's documents (find_data.py) and keep
the seeded state for reuse, as seed.py does for the tools' benchmark.

    .venv/bin/python bench/real/find_seed.py [--version 34] [--force]

The instance is its own (/var/tmp/nextcloud-mcp-bench/find-<version>): the documents are measured
apart from the tools' seed. Files go up by WebDAV bulk upload (what the desktop client uses), 100
a request, two requests at a time; events by CalDAV PUT. The saved seed is restored in seconds
when its marker names the current documents (find_data.spec_hash()).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import find_data
import httpx
from seed import BASE_DIR, NOTES_API, OCS, Instance, _put_all
from seed_files import bulk_upload, check, mkcols

__all__ = ["FindInstance", "ensure_find_seeded"]


class FindInstance(Instance):
    """The kit's instance for the find benchmark, its saved seed marked by the documents' hash."""

    def __init__(self, version: str, directory: Path | None = None) -> None:
        super().__init__(version, directory or BASE_DIR / f"find-{version}")

    def seeded_matches(self) -> bool:
        marker = self.saved / "find-spec.sha256"
        return marker.is_file() and marker.read_text().strip() == find_data.spec_hash()

    def save(self, manifest: dict[str, Any]) -> None:
        super().save(manifest)
        (self.saved / "find-spec.sha256").write_text(find_data.spec_hash() + "\n")


async def seed(instance: FindInstance) -> dict[str, Any]:
    cfg = instance.config
    user, password = "alice", cfg["alice"]["app_password"]
    files_root = f"/remote.php/dav/files/{user}"
    docs = find_data.corpus_docs() + find_data.filler_docs()
    evts = find_data.events()
    timings: dict[str, float] = {}
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    async with httpx.AsyncClient(
        base_url=cfg["url"], auth=(user, password), timeout=600, limits=limits
    ) as client:
        started = time.monotonic()
        await mkcols(client, files_root, {d.path.rpartition("/")[0] for d in docs})
        await bulk_upload(client, [(d.path, d.content, find_data.MTIME) for d in docs], 100, 2)
        timings["files"] = time.monotonic() - started
        started = time.monotonic()
        await _put_all(
            client,
            f"/remote.php/dav/calendars/{user}/personal",
            [(e.href, e.ics) for e in evts],
            "text/calendar; charset=utf-8",
        )
        timings["events"] = time.monotonic() - started
        listed = check(
            await client.get(f"{NOTES_API}/notes", params={"exclude": "content"}, headers=OCS), 200
        ).json()
    notes = [d for d in docs if d.kind == "note"]
    if len(listed) < len(notes):
        raise RuntimeError(f"the Notes API lists {len(listed)} notes, {len(notes)} were uploaded")
    return {
        "find_spec_sha256": find_data.spec_hash(),
        "version": instance.version,
        "files": len(docs),
        "binary": sum(d.path.rpartition(".")[2] in find_data.BINARY for d in docs),
        "notes": len(notes),
        "events": len(evts),
        "bytes": sum(len(d.content) for d in docs),
        "seed_seconds": timings,
        "note_ids": {str(n["id"]): n["title"] for n in listed},
    }


def ensure_find_seeded(version: str, *, force: bool = False, directory: Path | None = None) -> FindInstance:
    """A running instance holding the find documents: restored when saved, else seeded."""
    instance = FindInstance(version, directory)
    if not force and instance.seeded_matches():
        started = time.monotonic()
        instance.restore()
        print(f"[find-seed] restored the saved seed in {time.monotonic() - started:.1f} s", flush=True)
        return instance
    started = time.monotonic()
    instance.start()
    print(f"[find-seed] Nextcloud {version} in {instance.dir} started in {time.monotonic() - started:.1f} s")
    instance.kit("reset", str(instance.dir))
    started = time.monotonic()
    manifest = asyncio.run(seed(instance))
    manifest["seed_total_seconds"] = time.monotonic() - started
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in manifest["seed_seconds"].items())
    print(
        f"[find-seed] {manifest['files']} files ({manifest['binary']} PDF/DOCX/ODT, "
        f"{manifest['bytes'] / 1e6:.1f} MB) and {manifest['events']} events seeded in "
        f"{manifest['seed_total_seconds']:.1f} s ({parts})",
        flush=True,
    )
    instance.save(manifest)
    return instance


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument("--force", action="store_true", help="seed again even when a saved seed matches")
    args = parser.parse_args()
    instance = ensure_find_seeded(args.version, force=args.force)
    print(json.dumps({k: v for k, v in instance.manifest.items() if k != "note_ids"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
