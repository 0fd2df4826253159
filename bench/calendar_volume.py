"""One week of a ten-year calendar on a real Nextcloud (issue 30, ADR 0050): the old way of reading
it (the week's REPORT beside a `prop-filter RRULE` REPORT for every repeating event, the whole
calendar after a 500) against the new one (the week's REPORT beside a REPORT of the rules without
an end, kept by the calendar's ctag), each followed by the same local expansion. Per path and week:
wall time, Nextcloud requests and bytes sent (nginx's access log), Nextcloud's CPU (php-fpm's
processes in /proc). Interleaved rounds, medians.

    K=/work/shared/nextcloud/nextcloud   # the kit
    $K start /var/tmp/nextcloud-cal --version 34
    .venv/bin/python bench/calendar_volume.py /var/tmp/nextcloud-cal --seed   # seeds alice once
    .venv/bin/python bench/calendar_volume.py /var/tmp/nextcloud-cal --rounds 5

Seeding (alice's `personal`): 3,000 single events over ten years (timed, all-day, some in
Europe/Berlin), a daily rule without an end that began ten years ago (over 3,500 occurrences before
today), weekly ones with EXDATEs and moved occurrences, monthly and yearly ones, and 20 rules with a
COUNT spread over the years.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import recurrence
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

FIRST_DAY = datetime(2016, 11, 28, tzinfo=UTC)
TODAY = datetime(2026, 11, 26, tzinfo=UTC)
WEEKS = {"this week": datetime(2026, 11, 23, tzinfo=UTC), "5 years ago": datetime(2021, 11, 22, tzinfo=UTC)}
Q = '<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
PROP = "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
ANSWERS: dict[datetime, set[str]] = {}  # per week, the distinct answers of every path and round


def _ics(*events: str) -> str:
    body = "".join(f"BEGIN:VEVENT\r\nDTSTAMP:20161101T000000Z\r\n{e}\r\nEND:VEVENT\r\n" for e in events)
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n{body}END:VCALENDAR\r\n"


def _z(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def calendar_objects() -> dict[str, str]:
    rng = random.Random(30)
    found: dict[str, str] = {}
    span = (TODAY + timedelta(days=60) - FIRST_DAY).days
    for n in range(3000):
        day = FIRST_DAY + timedelta(days=rng.randrange(span))
        uid = f"single-{n}"
        text = "\\n".join(
            f"Notes line {i} of a meeting about the project." for i in range(rng.randrange(1, 6))
        )
        about = f"SUMMARY:Meeting {n}\r\nLOCATION:Room {n % 12}\r\nDESCRIPTION:{text}"
        if n % 10 == 0:
            first = day.strftime("%Y%m%d")
            after = (day + timedelta(days=1)).strftime("%Y%m%d")
            found[uid] = _ics(
                f"UID:{uid}\r\n{about}\r\nDTSTART;VALUE=DATE:{first}\r\nDTEND;VALUE=DATE:{after}"
            )
        elif n % 10 == 1:
            local = day.replace(tzinfo=None) + timedelta(hours=rng.randrange(8, 18))
            found[uid] = _ics(
                f"UID:{uid}\r\n{about}\r\nDTSTART;TZID=Europe/Berlin:{local:%Y%m%dT%H%M%S}\r\n"
                f"DTEND;TZID=Europe/Berlin:{local + timedelta(hours=1):%Y%m%dT%H%M%S}"
            )
        else:
            start = day + timedelta(hours=rng.randrange(7, 18), minutes=rng.choice((0, 15, 30, 45)))
            end = start + timedelta(minutes=rng.choice((30, 45, 60, 90)))
            found[uid] = _ics(f"UID:{uid}\r\n{about}\r\nDTSTART:{_z(start)}\r\nDTEND:{_z(end)}")
    found["daily"] = _ics(
        "UID:daily\r\nSUMMARY:Stand-up\r\nDTSTART:20161101T083000Z\r\nDURATION:PT15M\r\nRRULE:FREQ=DAILY"
    )
    mondays = [FIRST_DAY + timedelta(weeks=w) for w in range(0, 520, 26)]
    exdates = ",".join(_z(m + timedelta(hours=14)) for m in mondays)
    moved = [
        f"UID:weekly\r\nSUMMARY:Weekly (moved)\r\nRECURRENCE-ID:{_z(m + timedelta(weeks=1, hours=14))}\r\n"
        f"DTSTART:{_z(m + timedelta(weeks=1, days=3, hours=16))}\r\nDURATION:PT1H"
        for m in mondays[::2]
    ]
    found["weekly"] = _ics(
        f"UID:weekly\r\nSUMMARY:Weekly\r\nDTSTART:{_z(FIRST_DAY + timedelta(hours=14))}\r\nDURATION:PT1H\r\n"
        f"RRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\nEXDATE:{exdates}",
        *moved,
    )
    found["monthly"] = _ics(
        "UID:monthly\r\nSUMMARY:Monthly\r\nDTSTART:20170125T120000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY"
    )
    for n in range(5):
        found[f"birthday-{n}"] = _ics(
            f"UID:birthday-{n}\r\nSUMMARY:Birthday {n}\r\nDTSTART;VALUE=DATE:1980{n + 1:02d}15\r\n"
            f"DTEND;VALUE=DATE:1980{n + 1:02d}16\r\nRRULE:FREQ=YEARLY"
        )
    for n in range(20):
        start = FIRST_DAY + timedelta(days=180 * n, hours=10)
        found[f"course-{n}"] = _ics(
            f"UID:course-{n}\r\nSUMMARY:Course {n}\r\nDTSTART:{_z(start)}\r\nDURATION:PT2H\r\n"
            f"RRULE:FREQ=WEEKLY;COUNT={10 + n}"
        )
    return found


async def seed(url: str, user: str, password: str) -> None:
    objects = calendar_objects()
    base = f"{url}/remote.php/dav/calendars/{user}/personal/"
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in objects.items():
        queue.put_nowait(item)

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            uid, ics = queue.get_nowait()
            for _attempt in range(5):  # SQLite: a write may find the database locked (500)
                answer = await client.put(
                    f"{base}{uid}.ics", content=ics.encode(), headers={"Content-Type": "text/calendar"}
                )
                if answer.status_code != 500:
                    break
            assert answer.status_code in (201, 204), (uid, answer.status_code, answer.text[:200])

    async with httpx.AsyncClient(auth=(user, password), timeout=60) as client:
        await asyncio.gather(*(worker(client) for _ in range(1)))
    print(f"seeded {len(objects)} objects into {base}")


def php_fpm_cpu(directory: Path) -> float:
    """CPU seconds of the instance's php-fpm master and its workers."""
    master = int((directory / "run" / "php-fpm.pid").read_text())
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(stat.parent.name) == master or int(fields[1]) == master:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


class AccessLog:
    def __init__(self, directory: Path) -> None:
        self.path = directory / "log" / "nginx-access.log"
        self.offset = self.path.stat().st_size

    def since(self) -> tuple[int, int]:
        """Requests and bytes sent since this object was made."""
        requests = sent = 0
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            for line in handle:
                parts = line.split(b'" ', 1)[1].split() if b'" ' in line else []
                requests += 1
                sent += int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        return requests, sent


async def old_path(client: NextcloudClient, lower: datetime, upper: datetime) -> list[str]:
    """What nc_calendar_list_events did before ADR 0050 (its requests, verbatim)."""
    caldav = client.caldav
    cal = await caldav.calendar("personal")

    async def report(inner: str) -> dict[str, str]:
        body = (
            f'{Q}{PROP}<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">{inner}'
            "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
        )
        found = {}
        async for item in caldav._multistatus("REPORT", cal.href, "1", body):
            found[item.href] = item.text("{urn:ietf:params:xml:ns:caldav}calendar-data")
        return found

    repeating = asyncio.ensure_future(report('<c:prop-filter name="RRULE"/>'))
    try:
        timed = await report(f'<c:time-range start="{_z(lower)}" end="{_z(upper)}"/>')
    except Exception:
        repeating.cancel()
        return list((await report("")).values())
    return list({**await repeating, **timed}.values())


async def new_path(client: NextcloudClient, lower: datetime, upper: datetime) -> list[str]:
    caldav = client.caldav
    cal = await caldav.calendar("personal", find_default=False)
    return [obj.ics for obj in await caldav.events_between(cal, lower, upper)]


async def measure(
    directory: Path, path: Callable[[datetime, datetime], Awaitable[list[str]]], lower: datetime
) -> dict[str, float]:
    upper = lower + timedelta(days=7)
    log, cpu, wall = AccessLog(directory), php_fpm_cpu(directory), time.perf_counter()
    objects = await path(lower, upper)
    expanded = await recurrence.expand(objects, lower, upper)
    wall = time.perf_counter() - wall
    await asyncio.sleep(0.05)  # nginx writes its log line after the answer
    requests, sent = log.since()
    occurrences = sorted(
        (str(o.get("UID")), str(o.get("DTSTART").dt))
        for found in expanded.occurrences
        for o, _ in found or []
    )
    ANSWERS.setdefault(lower, set()).add(repr(occurrences))
    return {
        "wall_s": wall,
        "requests": requests,
        "kib": sent / 1024,
        "nextcloud_cpu_s": php_fpm_cpu(directory) - cpu,
        "objects_read": len(objects),
        "occurrences": len(occurrences),
    }


async def run(directory: Path, rounds: int) -> dict[str, Any]:
    config = json.loads((directory / "nextcloud.json").read_text())
    url, user, password = config["url"], "alice", config["alice"]["app_password"]
    figures: dict[str, list[dict[str, float]]] = {}
    for n in range(rounds):
        print(f"round {n + 1} of {rounds}", flush=True)
        for week, lower in WEEKS.items():
            http = NextcloudHTTP(url)
            try:
                client = NextcloudClient(http, BasicCredential(user, password))
                await client.caldav.calendars()  # discovery once, as a running server has it
                paths: list[tuple[str, Callable[..., Awaitable[list[str]]]]] = [
                    ("old", old_path),
                    ("new (first)", new_path),
                    ("new (unchanged)", new_path),
                ]
                for name, way in paths:
                    path = functools.partial(way, client)
                    figures.setdefault(f"{week} | {name}", []).append(await measure(directory, path, lower))
            finally:
                await http.aclose()
    return {key: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for key, runs in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", type=Path, help="the kit's instance directory (its nextcloud.json)")
    parser.add_argument("--seed", action="store_true", help="put the ten-year calendar into alice's personal")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.seed:
        config = json.loads((args.directory / "nextcloud.json").read_text())
        asyncio.run(seed(config["url"], "alice", config["alice"]["app_password"]))
        return
    medians = asyncio.run(run(args.directory, args.rounds))
    assert all(len(answers) == 1 for answers in ANSWERS.values()), "the paths answered differently"
    print(
        f"{'week | path':38} {'wall s':>7} {'req':>4} {'KiB':>8} {'NC CPU s':>9} {'objects':>8} {'occ.':>5}"
    )
    for key, m in medians.items():
        print(
            f"{key:38} {m['wall_s']:7.3f} {m['requests']:4.0f} {m['kib']:8.1f} {m['nextcloud_cpu_s']:9.2f} "
            f"{m['objects_read']:8.0f} {m['occurrences']:5.0f}"
        )


if __name__ == "__main__":
    main()
