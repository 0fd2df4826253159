"""The first call in a new process: per tool and round, this server and the PyPI package each
started anew (spawned and initialised, not timed) for that one call, and the floor's requests on a
new connection (a new client, so its TCP set-up and first authentication are paid as a new
process pays them). What a host that starts the server per conversation waits for; the rounds'
warm column is what a long-lived process answers in.

A new process is used as a host uses it: `initialize`, `tools/list` (the host gives the tools to
its model), then HOST_PAUSE_S before the call, the least a model takes to read a first prompt and
answer with a tool call. What a process does in that pause (docs/ADR/0090) is not timed; what is
still under way when the call arrives is. `bench/real/first_imports.py --pause 0` shows a call
made the instant the handshake is over."""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from calls import floor_client, measured, published_session, tool_call
from floors import FLOORS
from mcp import ClientSession
from section import Context, Line, Section

from tests.mcp_clients import stdio_session

__all__ = ["SECTION"]

ROUNDS = 3  # at most; a PyPI package's start costs seconds per call
HOST_PAUSE_S = 1.0  # between tools/list and the first call (see the docstring)
TARGET = 1.3  # the first call at most 1.3x the floor's first request


async def _as_a_host(session: ClientSession, pause: float = HOST_PAUSE_S) -> None:
    """What a host does between `initialize` and its model's first tool call."""
    await session.list_tools()
    await asyncio.sleep(pause)


async def _run(ctx: Context) -> dict[str, Any]:
    calls: dict[str, dict[str, list[dict[str, Any]]]] = {}
    # this_now: the same new process called right after tools/list (no pause)
    subjects = ["this", "this_now", "floor"] + (["pypi"] if ctx.with_published else [])
    pub_dir = ctx.work / "published-first"
    pub_dir.mkdir(exist_ok=True)
    with open(ctx.work / "first-call.log", "a") as errlog:
        for r in range(min(ctx.rounds, ROUNDS)):
            for n, case in enumerate(ctx.cases):
                shift = (r + n) % len(subjects)
                for subject in subjects[shift:] + subjects[:shift]:
                    if subject in ("this", "this_now"):
                        async with stdio_session(ctx.env, cwd=ctx.work, errlog=errlog) as fresh:
                            await _as_a_host(fresh, HOST_PAUSE_S if subject == "this" else 0.0)
                            record, _ = await measured(ctx.meter, tool_call(fresh, case.tool, case.args))
                    elif subject == "floor":
                        async with floor_client(ctx.url, ctx.password) as client:
                            floor = FLOORS[case.id]
                            record, _ = await measured(
                                ctx.meter, lambda c=client, f=floor: f(c, "alice", ctx.manifest)
                            )
                    elif case.published is not None:
                        async with published_session(ctx.url, ctx.password, pub_dir) as pub:
                            await _as_a_host(pub)
                            record, _ = await measured(ctx.meter, tool_call(pub, *case.published))
                    else:
                        continue
                    calls.setdefault(case.id, {}).setdefault(subject, []).append(record)
            print(f"[first call {r + 1}/{min(ctx.rounds, ROUNDS)}] done", flush=True)
    return {"calls": calls}


def _median(records: list[dict[str, Any]], key: str) -> float | None:
    good = [x[key] for x in records if x["ok"]]
    return statistics.median(good) if good else None


def _report(mine: dict[str, Any], everything: dict[str, Any]) -> list[Line]:
    warm = everything.get("summary", {})
    head = (
        f"{'tool':20} | {'first':>6} {'req':>4} {'at once':>7} {'req':>4} {'warm':>6} {'req':>4} "
        f"| {'floor 1st':>9} {'warm':>6} | {'pypi 1st':>8} {'warm':>6} | first/fl once/fl warm/fl"
    )
    print(
        "\nfirst call in a new process beside the warm call (ms, medians; req: Nextcloud requests). "
        f"first: initialize, tools/list, {HOST_PAUSE_S:g} s (a model's reply), the call; "
        "at once: initialize, tools/list, the call"
    )
    print(head + "\n" + "-" * len(head))
    lines: list[Line] = []
    summary: dict[str, dict[str, Any]] = {}
    for cid, per in mine["calls"].items():
        first = {s: _median(per.get(s, []), "wall_s") for s in ("this", "this_now", "floor", "pypi")}
        reqs = _median(per.get("this", []), "requests")
        reqs_now = _median(per.get("this_now", []), "requests")
        w = {s: warm.get(cid, {}).get(s, {}) for s in ("this", "floor", "pypi")}

        def ms(x: float | None) -> str:
            return "-" if x is None else f"{x * 1000:.0f}"

        def wms(s: str, w: dict[str, dict[str, Any]] = w) -> str:
            return f"{w[s]['wall_ms']:.0f}" if w[s].get("ok") else "-"

        ratio_first = first["this"] / first["floor"] if first["this"] and first["floor"] else None
        ratio_now = first["this_now"] / first["floor"] if first["this_now"] and first["floor"] else None
        ratio_warm = (
            w["this"]["wall_ms"] / w["floor"]["wall_ms"]
            if w["this"].get("ok") and w["floor"].get("ok")
            else None
        )
        wreq = f"{w['this']['requests']:.0f}" if w["this"].get("ok") else "-"
        print(
            f"{cid:20} | {ms(first['this']):>6} {'-' if reqs is None else f'{reqs:.0f}':>4} "
            f"{ms(first['this_now']):>7} {'-' if reqs_now is None else f'{reqs_now:.0f}':>4} "
            f"{wms('this'):>6} {wreq:>4} | {ms(first['floor']):>9} {wms('floor'):>6} "
            f"| {ms(first['pypi']):>8} {wms('pypi'):>6} "
            f"| {'-' if ratio_first is None else f'{ratio_first:.2f}':>8} "
            f"{'-' if ratio_now is None else f'{ratio_now:.2f}':>7} "
            f"{'-' if ratio_warm is None else f'{ratio_warm:.2f}':>7}"
        )
        summary[cid] = {
            "first_ms": first,
            "first_requests": reqs,
            "first_over_floor": ratio_first,
            "at_once_over_floor": ratio_now,
        }
        if ratio_first is not None and first["this"] is not None and first["floor"] is not None:
            lines.append(
                (
                    f"{cid}: first call <= {TARGET}x the floor's first request",
                    ratio_first <= TARGET,
                    f"{first['this'] * 1000:.0f} vs {first['floor'] * 1000:.0f} ms",
                )
            )
        elif not per.get("this") or first["this"] is None:
            note = next((x["note"] for x in per.get("this", []) if not x["ok"]), None)
            lines.append((f"{cid}: first call answers", False, str(note)))
    mine["summary"] = summary
    _print_requests(mine, warm)
    return lines


def _short(asked: str) -> str:
    method, _, path = asked.partition(" ")
    for prefix in ("/remote.php/dav", "/index.php/apps", "/ocs/v2.php"):
        path = path.removeprefix(prefix)
    return f"{method} {path if len(path) <= 40 else path[:18] + '..' + path[-20:]}"


def _print_requests(mine: dict[str, Any], warm: dict[str, Any]) -> None:
    """Per tool: the requests of this server's first call in a new process (its first round, in
    the order Nextcloud logged them), beside the floor's count and the warm call's."""
    print(
        "\nrequests per call: this server's first call (new process, after the pause), warm call, the floor's"
    )
    for cid, per in mine["calls"].items():
        first = next((x for x in per.get("this", []) if x["ok"]), None)
        floor = next((x for x in per.get("floor", []) if x["ok"]), None)
        w = warm.get(cid, {}).get("this", {})
        if first is None:
            continue
        print(
            f"{cid:20} first {first['requests']:>2}  warm {w.get('requests', '-'):>2}  "
            f"floor {floor['requests'] if floor else '-':>2}  " + ", ".join(_short(a) for a in first["asked"])
        )


SECTION = Section("first_call", _run, _report)
