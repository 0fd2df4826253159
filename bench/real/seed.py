"""Seed the kit's real Nextcloud for the real-data benchmark, through Nextcloud's own APIs, and keep
the seeded state for reuse.

    .venv/bin/python bench/real/seed.py [--version 34] [--dir D] [--force]

Starts the kit's Nextcloud in its own directory (/var/tmp/nextcloud-mcp-bench/<version>, never
the tests' instances), then either restores the saved seed (DIR/.seeded, when its marker names
the current SPEC) or seeds user alice from scratch: notes and files by WebDAV bulk upload (what
the desktop client uses), calendar objects and contacts by CalDAV/CardDAV PUT, shares by OCS.
The truth about the data (counts, ids, hrefs) goes to DIR/manifest.json for the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import icalendar
import recurring_ical_events

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import data  # noqa: E402
from seed_files import bulk_upload, check, gather_limited, mkcols, scan, write_tree  # noqa: E402

__all__ = ["Instance", "ensure_seeded", "week_bounds"]

KIT = Path(os.environ.get("NEXTCLOUD_KIT", ROOT.parent / "shared" / "nextcloud" / "nextcloud"))
BASE_DIR = Path("/var/tmp/nextcloud-mcp-bench")  # noqa: S108 (www-data must traverse it)
NOTES_API = "/index.php/apps/notes/api/v1"
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
SHARES = "/ocs/v2.php/apps/files_sharing/api/v1/shares"


def spec_hash(version: str) -> str:
    return hashlib.sha256(
        json.dumps({"spec": data.SPEC, "version": version}, sort_keys=True).encode()
    ).hexdigest()


class Instance:
    """The kit's instance in `dir`: start, stop, and the saved seed (`dir/.seeded`)."""

    def __init__(self, version: str, directory: Path | None = None) -> None:
        self.version = version
        self.dir = directory or BASE_DIR / version
        self.saved = self.dir / ".seeded"

    def kit(self, *args: str) -> str:
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
        done = subprocess.run(
            [str(KIT), *args], capture_output=True, text=True, timeout=1800, env=env, check=False
        )
        if done.returncode:
            raise RuntimeError(f"kit {' '.join(args[:2])} failed: {done.stderr[-3000:]}")
        return done.stdout

    def start(self) -> None:
        self.dir.parent.mkdir(parents=True, exist_ok=True)
        self.dir.parent.chmod(0o755)
        self.kit("start", str(self.dir), "--version", self.version)

    def stop(self) -> None:
        self.kit("stop", str(self.dir))

    @property
    def config(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.dir / "nextcloud.json").read_text())
        return loaded

    @property
    def manifest(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.saved / "manifest.json").read_text())
        return loaded

    def seeded_matches(self) -> bool:
        marker = self.saved / "spec.sha256"
        return marker.is_file() and marker.read_text().strip() == spec_hash(self.version)

    def save(self, manifest: dict[str, Any]) -> None:
        """Stop, copy data/ and config.php to .seeded (as the kit does for .pristine), start."""
        self.stop()
        tmp = self.dir / ".seeded.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(mode=0o700)
        subprocess.run(["/bin/cp", "-a", str(self.dir / "data"), str(tmp / "data")], check=True)
        subprocess.run(
            ["/bin/cp", "-a", str(self.dir / "server/config/config.php"), str(tmp / "config.php")], check=True
        )
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        (tmp / "spec.sha256").write_text(spec_hash(self.version) + "\n")
        shutil.rmtree(self.saved, ignore_errors=True)
        tmp.rename(self.saved)
        self.start()

    def restore(self) -> None:
        """Stop, put the saved seed back (data/, config.php), clear sessions, start."""
        self.stop()
        shutil.rmtree(self.dir / "data")
        subprocess.run(["/bin/cp", "-a", str(self.saved / "data"), str(self.dir / "data")], check=True)
        subprocess.run(
            ["/bin/cp", "-a", str(self.saved / "config.php"), str(self.dir / "server/config/config.php")],
            check=True,
        )
        shutil.rmtree(self.dir / "run" / "sessions", ignore_errors=True)
        self.start()


def week_bounds(monday: datetime) -> tuple[datetime, datetime]:
    return monday, monday + timedelta(days=7)


def measured_weeks() -> dict[str, datetime]:
    anchor = datetime.combine(data.ANCHOR, datetime.min.time(), UTC)
    return {"this_week": anchor, "five_years_ago": anchor - timedelta(weeks=5 * 52)}


async def _put_all(
    client: httpx.AsyncClient, base: str, objects: Sequence[tuple[str, str]], ctype: str
) -> None:
    async def put(name: str, body: str) -> None:
        headers = {"Content-Type": ctype, "If-None-Match": "*"}
        for attempt in range(20):
            response = await client.put(f"{base}/{name}", content=body.encode(), headers=headers)
            # SQLite takes one writer at a time: a PUT meeting another writer's lock for too long
            # is answered 500 "database is locked"; it is tried again. 412: there from an earlier
            # (interrupted) seed, with the same content (the data is deterministic).
            if response.status_code == 500 and "database is locked" in response.text and attempt < 19:
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            check(response, 201, 204, 412)
            return

    await gather_limited([lambda n=n, b=b: put(n, b) for n, b in objects], 2)  # type: ignore[misc]


def _week_truth(events: Sequence[data.CalendarObject], monday: datetime) -> dict[str, Any]:
    lower, upper = week_bounds(monday)
    instances = 0
    hrefs = []
    for obj in events:
        found = recurring_ical_events.of(icalendar.Calendar.from_ical(obj.ics)).between(lower, upper)
        instances += len(found)
        if obj.recurring or (obj.start is not None and lower - timedelta(hours=3) <= obj.start < upper):
            hrefs.append(obj.href)
    return {"start": lower.isoformat(), "end": upper.isoformat(), "instances": instances, "hrefs": hrefs}


PARTS = ("notes", "files", "calendar", "contacts", "shares")


async def _calendar(
    client: httpx.AsyncClient,
    cal: str,
    events: Sequence[data.CalendarObject],
    tasks: Sequence[data.CalendarObject],
) -> None:
    await _put_all(
        client, f"{cal}/personal", [(e.href, e.ics) for e in events], "text/calendar; charset=utf-8"
    )
    body = (
        '<?xml version="1.0"?><c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        "<d:set><d:prop><d:displayname>Tasks</d:displayname><c:supported-calendar-component-set>"
        '<c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>'
    )
    check(await client.request("MKCALENDAR", f"{cal}/tasks/", content=body), 201, 405)
    await _put_all(client, f"{cal}/tasks", [(t.href, t.ics) for t in tasks], "text/calendar; charset=utf-8")


async def _shares(client: httpx.AsyncClient) -> None:
    """Ten folders shared with admin (read-only and full, alternately) and by public link."""
    for n in range(10):
        for kind in (0, 3):
            form = {"path": f"/Projects/project-{n:02}", "shareType": str(kind), "permissions": "1"}
            if kind == 0:
                form["shareWith"] = "admin"
                form["permissions"] = "31" if n % 2 else "1"
            check(await client.post(SHARES, data=form, headers=OCS), 200)


async def seed(
    instance: Instance, parts: Sequence[str] = PARTS, *, by_upload: bool = False
) -> dict[str, Any]:
    """Seed alice with `parts` (all by default; fewer to finish an interrupted seed); return the
    manifest (always of the whole SPEC, read back where Nextcloud assigns ids). Notes and files
    are written to disk and scanned (seed_files), or with `by_upload` sent by WebDAV bulk upload."""
    cfg = instance.config
    user, password = "alice", cfg["alice"]["app_password"]
    files_root = f"/remote.php/dav/files/{user}"
    timings: dict[str, float] = {}
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    async with httpx.AsyncClient(
        base_url=cfg["url"], auth=(user, password), timeout=600, limits=limits
    ) as client:
        started = time.monotonic()
        notes = data.notes()
        files = data.files()
        note_items = [(n.path, n.content.encode(), n.mtime) for n in notes]
        file_items = [(f.path, f.content, f.mtime) for f in files]
        if by_upload:
            if "notes" in parts:
                await mkcols(client, files_root, {n.path.rpartition("/")[0] for n in notes})
                await bulk_upload(client, note_items, 250, 2)
            timings["notes"] = time.monotonic() - started
            started = time.monotonic()
            if "files" in parts:
                await mkcols(client, files_root, {f.path.rpartition("/")[0] for f in files})
                await bulk_upload(client, file_items, 500, 2)
            timings["files"] = time.monotonic() - started
        else:
            chosen = (note_items if "notes" in parts else []) + (file_items if "files" in parts else [])
            write_tree(instance.dir / "data", user, chosen)
            timings["notes_and_files_written"] = time.monotonic() - started
            timings["notes_and_files_scanned"] = scan(instance.kit, instance.dir, user) if chosen else 0.0

        started = time.monotonic()
        events, tasks = data.calendar()
        cal = f"/remote.php/dav/calendars/{user}"
        if "calendar" in parts:
            await _calendar(client, cal, events, tasks)
        timings["calendar"] = time.monotonic() - started

        started = time.monotonic()
        cards = data.contacts()
        book = f"/remote.php/dav/addressbooks/users/{user}/contacts"
        if "contacts" in parts:
            await _put_all(
                client, book, [(f"{c.uid}.vcf", c.vcard) for c in cards], "text/vcard; charset=utf-8"
            )
        timings["contacts"] = time.monotonic() - started

        started = time.monotonic()
        if "shares" in parts:
            await _shares(client)
        shares = check(await client.get(SHARES, headers=OCS), 200).json()["ocs"]["data"]
        timings["shares"] = time.monotonic() - started
        started = time.monotonic()
        listed = check(
            await client.get(f"{NOTES_API}/notes", params={"exclude": "content"}, headers=OCS), 200
        ).json()
        timings["notes_first_listing"] = time.monotonic() - started
    if len(listed) != len(notes):
        raise RuntimeError(f"the Notes API lists {len(listed)} notes, {len(notes)} were uploaded")
    by_key = {(n["category"], n["title"]): n for n in listed}
    marker_ids = {
        w: sorted(by_key[(n.category, n.title)]["id"] for n in notes if w in n.markers)
        for w in data.SPEC["marker_words"]
    }
    newest = sorted(listed, key=lambda n: (-n["modified"], n["id"]))
    big = data.BIG_FOLDER
    return {
        "spec": data.SPEC,
        "spec_sha256": spec_hash(instance.version),
        "version": instance.version,
        "seed_seconds": timings,
        "notes": {
            "count": len(listed),
            "marker_ids": marker_ids,
            "newest_100_ids": [n["id"] for n in newest[:100]],
            "sample_id": newest[len(newest) // 2]["id"],
        },
        "calendar": {
            "events": len(events),
            "recurring_hrefs": [e.href for e in events if e.recurring],
            "weeks": {name: _week_truth(events, monday) for name, monday in measured_weeks().items()},
            "todos": len(tasks),
            "open_todos": sum("NEEDS-ACTION" in t.ics for t in tasks),
        },
        "contacts": {
            "count": len(cards),
            "photos": sum(c.has_photo for c in cards),
            "rare_surname": data.RARE_SURNAME,
            "rare_surname_count": data.RARE_SURNAME_COUNT,
        },
        "files": {
            "count": len(files),
            "big_folder": big,
            "big_folder_entries": sum(f.path.rpartition("/")[0] == big for f in files),
            "small_folder": data.SMALL_FOLDER,
            "small_folder_entries": len(
                {
                    f.path[len(data.SMALL_FOLDER) + 1 :].split("/")[0]
                    for f in files
                    if f.path.startswith(data.SMALL_FOLDER + "/")
                }
            ),
            "marker": data.SPEC["file_marker"],
            "marker_count": sum(data.SPEC["file_marker"] in f.path.rpartition("/")[2] for f in files),
        },
        "shares": [{"path": x["path"], "type": x["share_type"], "id": x["id"]} for x in shares],
    }


def ensure_seeded(
    version: str, directory: Path | None = None, *, force: bool = False, by_upload: bool = False
) -> Instance:
    """A running instance holding the seed of the current SPEC: restored when saved, else seeded."""
    instance = Instance(version, directory)
    if not force and instance.seeded_matches():
        # Restored even when the instance does not start as it is (a copy cut short, say).
        started = time.monotonic()
        instance.restore()
        print(f"[seed] restored the saved seed in {time.monotonic() - started:.1f} s", flush=True)
        return instance
    started = time.monotonic()
    instance.start()
    print(
        f"[seed] Nextcloud {version} in {instance.dir} started in {time.monotonic() - started:.1f} s",
        flush=True,
    )
    if (instance.dir / ".seeded").exists() or force:
        print(
            "[seed] the saved seed is stale or --force: back to the kit's seed state, then seeding",
            flush=True,
        )
    instance.kit("reset", str(instance.dir))  # the kit's empty seed state (users, app passwords)
    started = time.monotonic()
    manifest = asyncio.run(seed(instance, by_upload=by_upload))
    seconds = time.monotonic() - started
    manifest["seed_total_seconds"] = seconds
    parts = ", ".join(f"{k} {v:.0f} s" for k, v in manifest["seed_seconds"].items())
    print(f"[seed] seeded in {seconds:.0f} s ({parts})", flush=True)
    started = time.monotonic()
    instance.save(manifest)
    print(f"[seed] saved to {instance.saved} in {time.monotonic() - started:.1f} s", flush=True)
    return instance


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument(
        "--dir", type=Path, help="instance directory (default /var/tmp/nextcloud-mcp-bench/VERSION)"
    )
    parser.add_argument("--force", action="store_true", help="seed again even when a saved seed matches")
    parser.add_argument(
        "--finish",
        metavar="PARTS",
        help="finish an interrupted seed on the running instance: seed only these parts (comma-separated "
        f"of {','.join(PARTS)}; empty for none), then write the manifest and save",
    )
    parser.add_argument(
        "--upload",
        action="store_true",
        help="notes and files by WebDAV bulk upload (slow), not disk and scan",
    )
    parser.add_argument("--no-save", action="store_true", help="with --finish: do not save")
    args = parser.parse_args()
    if args.finish is not None:
        instance = Instance(args.version, args.dir)
        started = time.monotonic()
        manifest = asyncio.run(
            seed(instance, [p for p in args.finish.split(",") if p], by_upload=args.upload)
        )
        print(f"[seed] {args.finish or 'nothing'} seeded in {time.monotonic() - started:.0f} s", flush=True)
        if not args.no_save:
            instance.save(manifest)
        return 0
    instance = ensure_seeded(args.version, args.dir, force=args.force, by_upload=args.upload)
    print(f"ready {instance.config['url']} {instance.saved / 'manifest.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
