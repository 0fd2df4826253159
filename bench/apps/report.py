"""The app bench's table: per toolset and tool, this server's requests beside the minimum the app's
API needs (minimum.py), marked OVER where it asks more, and wall times beside the floor."""

from __future__ import annotations

import statistics
from typing import Any

__all__ = ["table"]

Minimum = dict[str, tuple[int, str, bool]]


def _ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:.0f}" if seconds else "-"


def _counts(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def _row(tool: str, records: list[dict[str, Any]], minimum: Minimum) -> tuple[str, bool]:
    good = [r for r in records if r["error"] is None]
    if not good:
        return f"  {tool:34} FAILED {records[0]['error'][:80]}", True
    ours = [r["requests"] for r in good]
    least, _, _ = minimum.get(tool, (0, "", False))
    over = max(ours) > least if least else True
    floors = [r["floor_s"] for r in good if r.get("floor_s") is not None]
    mark = "OVER" if over else "ok"
    if not least:
        mark = "NO MINIMUM"
    line = (
        f"  {tool:34} {_counts(ours):>5} {least or '?':>4}  {mark:10} "
        f"{_ms([r['wall_s'] for r in good]):>6} {_ms(floors):>6}  {len(good)}/{len(records)}"
    )
    return line, over


def table(results: dict[str, Any], minimum: Minimum) -> str:
    load = results["load"]
    lines = [
        f"App toolsets on the real Nextcloud {results['versions']['nextcloud']} with apps "
        f"(load average {load['before'][0]:.2f} before, {load['after'][0]:.2f} after; 2 cores; "
        "times are medians and move with the load, request counts are exact)",
        f"  {'tool':34} {'ours':>5} {'min':>4}  {'':10} {'ms':>6} {'floor':>6}  ok",
    ]
    overs = []
    for tool, records in sorted(results["calls"].items()):
        line, over = _row(tool, records, minimum)
        lines.append(line)
        if over:
            overs.append(tool)
    first = results["first_calls"]
    warm = results["first_call_warm"]
    extra = [r["requests"] - warm["requests"] for r in first]
    asked = sorted(
        {a.split("?")[0] for r in first for a in r["asked"]} - {a.split("?")[0] for a in warm["asked"]}
    )
    lines += [
        "",
        f"Discovery, once per process (and again after NEXTCLOUD_APPS_CACHE_SECONDS): the first call "
        f"made {_counts(extra)} requests more than the same call later: {', '.join(asked)}",
        "ours: requests this server sent for the call (nginx access log); min: the fewest the app's "
        "API needs for the same answer (bench/apps/minimum.py says why per tool); floor: the same "
        "GET requests sent directly on one connection (reads only)",
        f"over the minimum: {', '.join(overs) if overs else 'none'}",
    ]
    return "\n".join(lines)
