"""The app toolsets on the real Nextcloud with its apps (issue 43): per tool, the requests this
server makes for one call beside the fewest the app's API needs for that answer (minimum.py), and
its wall time beside the floor (the same requests sent directly), median of the rounds.

    .venv/bin/python bench/apps/measure.py [--version 34|29] [--rounds 3] [--only deck,tables]

Starts the kit's instance with `--apps all` under /var/tmp/nextcloud-mcp-bench/apps-VERSION
(installed once, reset to its seed state each run), a real IMAP and SMTP server and an RSS feed on
loopback, then this server over stdio as alice with every toolset. Each round is a new server
process whose first call pays the discovery (counted apart, with its requests). Requests are
counted in the instance's nginx access log (bench/real/meter.py), so they are exact under load;
times are not: the load average is printed beside them. Writes bench/results/bench_apps_VERSION
(.json and .txt)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "real"), str(HERE.parent), str(HERE.parents[1])]

from _procs import RESULTS, clean_env, write_result  # noqa: E402
from calls import floor_client  # noqa: E402
from meter import Meter  # noqa: E402
from minimum import MINIMUM  # noqa: E402
from report import table  # noqa: E402
from scenario import AS, FLOWS  # noqa: E402
from services import Bench, services  # noqa: E402

from tests.mcp_clients import Human, stdio_session  # noqa: E402

FIRST_CALL = ("nc_status_get", {})  # the first call of each process: it pays the discovery
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}


class Recorder:
    """Meters each tool call: its requests (method and full path, as nginx logged them) and wall time."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.calls: dict[str, list[dict[str, Any]]] = {}

    async def call(self, session: Any, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        self.meter.mark()
        started = time.perf_counter()
        result = await session.call_tool(tool, args)
        wall = time.perf_counter() - started
        cost = self.meter.cost()
        record = {
            "wall_s": wall,
            "requests": len(cost.requests),
            "asked": [f"{r.method} {r.path}" for r in cost.requests],
            "statuses": [r.status for r in cost.requests],
            "error": str(result.content)[:300] if result.is_error else None,
        }
        return record, result

    def keep(self, tool: str, record: dict[str, Any]) -> None:
        self.calls.setdefault(tool, []).append(record)


async def floor_time(client: Any, asked: list[str], repeats: int = 3) -> float | None:
    """The median wall time of sending `asked` (GETs only) directly; None when one was not a GET
    or did not succeed."""
    if not asked or any(not a.startswith("GET ") for a in asked):
        return None
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for line in asked:
            answer = await client.get(line.removeprefix("GET "), headers=OCS)
            if answer.status_code >= 300:
                return None
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def run(bench: Bench, rounds: int, only: list[str]) -> dict[str, Any]:
    meter = Meter(bench.dir)
    recorder = Recorder(meter)
    human = Human()
    firsts: list[dict[str, Any]] = []
    flows = {name: flow for name, flow in FLOWS.items() if (not only or name in only) and name in bench.flows}
    async with AsyncExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-apps-")))
        env = clean_env(
            {
                "NEXTCLOUD_HOST": bench.url,
                "NEXTCLOUD_USERNAME": "alice",
                "NEXTCLOUD_PASSWORD": bench.password,
                "NEXTCLOUD_MCP_TOOLSETS": "all",
                "LOG_LEVEL": "WARNING",
            }
        )
        errlog = stack.enter_context(open(work / "ours.log", "w"))  # noqa: SIM115
        client = await stack.enter_async_context(floor_client(bench.url, bench.password))
        for n in range(rounds):
            async with stdio_session(env, cwd=work, errlog=errlog, elicitation_callback=human.answer) as ours:
                first, _ = await recorder.call(ours, *FIRST_CALL)
                firsts.append(first)
                for name, flow in flows.items():
                    bench.before(name)

                    async def call(tool: str, args: dict[str, Any], session: Any = ours) -> Any:
                        variant = args.pop(AS, None)
                        key = f"{tool} ({variant})" if variant else tool
                        record, result = await recorder.call(session, tool, args)
                        least, _, read = MINIMUM.get(key, (0, "", False))
                        if record["error"] is None and read and record["requests"] <= least:
                            record["floor_s"] = await floor_time(client, record["asked"])
                        recorder.keep(key, record)
                        if record["error"] is not None:
                            raise RuntimeError(f"{tool}: {record['error']}")
                        answer = dict(result.structured_content or {})
                        if os.environ.get("BENCH_APPS_SHOW"):
                            print(tool, json.dumps(answer)[:600], flush=True)
                        return answer

                    try:
                        await flow(call, bench.setup, n)
                    except Exception as exc:  # one flow's fault is reported, the others still run
                        print(
                            f"[round {n + 1}] {name}: stopped at {type(exc).__name__}: {exc}"[:400],
                            flush=True,
                        )
            print(f"[round {n + 1}/{rounds}] done", flush=True)
        # the first call's own cost, in a process that has already discovered
        async with stdio_session(env, cwd=work, errlog=errlog) as ours:
            await recorder.call(ours, *FIRST_CALL)
            warm, _ = await recorder.call(ours, *FIRST_CALL)
    return {"calls": recorder.calls, "first_calls": firsts, "first_call_warm": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", choices=("34", "29"), default="34")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="flows, comma-separated (deck, tables, ...)")
    options = parser.parse_args()
    only = [o for o in options.only.split(",") if o]
    load_before = os.getloadavg()
    with services(options.version) as bench:
        results = asyncio.run(run(bench, options.rounds, only))
        results["versions"] = bench.versions
    results["load"] = {"before": load_before, "after": os.getloadavg()}
    results["version"] = options.version
    text = table(results, MINIMUM)
    print(text)
    name = f"bench_apps_{options.version}"
    if not only:
        write_result(name, results)
        (RESULTS / f"{name}.txt").write_text(text + "\n")
        print(f"written: bench/results/{name}.json and .txt")


if __name__ == "__main__":
    main()
