"""CPU and wall time of one listing over a calendar that holds a hostile recurring event.

    .venv/bin/python bench/hostile_calendar.py            # after: the bounded expansion
    .venv/bin/python bench/hostile_calendar.py --before   # also the unbounded one (capped at 60 s)

`after` is `recurrence.expand` (the worker thread included: CPU is the process's user+system
time); `before` is the plain `ical.expand_events` the tools called until ADR 0019, run in a child
process killed after --cap seconds. Writes bench/results/hostile_calendar.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from nextcloud_mcp_server.nextcloud.dav import ical_read, recurrence

START = datetime(2026, 11, 23, tzinfo=UTC)
CASES = {
    "secondly, endless, started 22 days earlier": ("20261101T000000Z", "FREQ=SECONDLY"),
    "minutely, endless, started 2020": ("20200101T000000Z", "FREQ=MINUTELY"),
    "daily on 30 February, COUNT=5 (never matches)": (
        "20261101T000000Z",
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=5",
    ),
    "yearly, every hour of the year (BYYEARDAY x BYHOUR)": (
        "20261101T000000Z",
        "FREQ=YEARLY;BYYEARDAY="
        + ",".join(map(str, range(1, 367)))
        + ";BYHOUR="
        + ",".join(map(str, range(24))),
    ),
}
RANGES = {"1 day": timedelta(days=1), "731 days": timedelta(days=731)}


def _ics(start: str, rule: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:hostile\r\n"
        f"DTSTAMP:20261101T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1S\r\nSUMMARY:x\r\nRRULE:{rule}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def after(ics: str, span: timedelta) -> dict[str, Any]:
    cpu, wall = _cpu(), time.perf_counter()
    found = asyncio.run(recurrence.expand([ics], START, START + span))
    result = {"cpu_s": round(_cpu() - cpu, 3), "wall_s": round(time.perf_counter() - wall, 3)}
    result["occurrences"] = len(found.occurrences[0] or [])
    result["notes"] = len(found.notes)
    return result


async def _lag_during(calls: int) -> dict[str, Any]:
    """How late a 10 ms timer fires on the event loop (what /health waits for) while `calls`
    hostile listings (the never-matching rule: the worst, it runs to the deadline) are running."""
    ics = _ics(*CASES["daily on 30 February, COUNT=5 (never matches)"])
    lags: list[float] = []
    cpu, wall = _cpu(), time.perf_counter()
    work = asyncio.gather(*(recurrence.expand([ics], START, START + timedelta(days=1)) for _ in range(calls)))
    task = asyncio.ensure_future(work)
    while not task.done():
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - before - 0.01)
    await task
    lags.sort()
    return {
        "concurrent_calls": calls,
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(_cpu() - cpu, 2),
        "loop_lag_ms_p50": round(1000 * lags[len(lags) // 2], 1),
        "loop_lag_ms_max": round(1000 * lags[-1], 1),
    }


def _before_child(ics: str, span: timedelta, queue: Any) -> None:
    cpu = _cpu()
    count = len(ical_read.expand_events(ics, START, START + span))
    queue.put({"cpu_s": round(_cpu() - cpu, 3), "occurrences": count})


def before(ics: str, span: timedelta, cap: float) -> dict[str, Any]:
    queue: Any = multiprocessing.Queue()
    child = multiprocessing.Process(target=_before_child, args=(ics, span, queue))
    wall = time.perf_counter()
    child.start()
    child.join(cap)
    if child.is_alive():
        child.kill()
        child.join()
        return {"wall_s": f"> {cap:g}", "killed": True}  # its CPU time is not measured
    result: dict[str, Any] = queue.get()
    result["wall_s"] = round(time.perf_counter() - wall, 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", action="store_true")
    parser.add_argument("--cap", type=float, default=60)
    args = parser.parse_args()
    rows = []
    for case, (start, rule) in CASES.items():
        for name, span in RANGES.items():
            row: dict[str, Any] = {"case": case, "range": name, "after": after(_ics(start, rule), span)}
            if args.before:
                row["before"] = before(_ics(start, rule), span, args.cap)
            rows.append(row)
            print(json.dumps(row), flush=True)
    for calls in (1, 8):
        row = {"case": "event-loop lag", "after": asyncio.run(_lag_during(calls))}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(__file__).parent / "results" / "hostile_calendar.json"
    out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
