"""What a tool call costs: MCP `tools/call` over streamable HTTP against the Nextcloud double
(seeded with notes and a folder of files), for this server and the published PyPI package, next to
the same Nextcloud requests made directly with httpx (the floor).

- latency at concurrency 1 (one session, calls one after another, targets interleaved in rounds),
  also for the SDK floor (`sdk_floor.py`: a bare MCPServer giving this server's answers, with none
  of its checks), which tells this server's own cost from the SDK's;
- throughput at 16 and 64 concurrent sessions (one SDK session per worker, fixed-length window);
- per call: Nextcloud requests made, time spent inside the double, CPU of server/double/client.

Every process is separate: the double, each server, and this client.

    .venv/bin/python bench/tool_calls.py [--calls 300] [--duration 10] [--tput-rounds 2] [--skip-published]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _double import Double, running_double, seed_user
from _mcp import (
    Call,
    Sequential,
    Target,
    Throughput,
    call_mix,
    direct_target,
    mcp_target,
    our_server,
    published_server,
    run,
    sdk_floor_server,
    sequential,
    throughput,
)
from _procs import cpu_seconds, latency_summary, write_result

USER, APP_PASSWORD = "bench", "bench-app-password"
FOLDER = "bench"
KINDS = ("notes_list", "note_get", "webdav_list")
LEVELS = (16, 64)


def note_ids(nextcloud: str) -> list[int]:
    response = httpx.get(
        f"{nextcloud}/index.php/apps/notes/api/v1/notes",
        params={"exclude": "content"},
        auth=(USER, APP_PASSWORD),
        timeout=30,
    )
    response.raise_for_status()
    return sorted(int(n["id"]) for n in response.json())


def worker_calls(ids: list[int], kinds: tuple[str, ...] = KINDS) -> Any:
    def calls_for(index: int) -> list[Call]:
        shift = index % len(ids)
        turned = kinds[index % len(kinds) :] + kinds[: index % len(kinds)]
        return call_mix(turned, ids[shift:] + ids[:shift], FOLDER, 300)

    return calls_for


async def latency(
    targets: dict[str, Target], double: Double, calls: list[Call], rounds: int, warmup: int
) -> dict[str, dict[str, Any]]:
    """Concurrency 1; each round, every target runs its share of `calls` (order rotates)."""
    results = {key: Sequential() for key in targets}
    meters = {
        key: {"requests": 0, "double_s": 0.0, "server_cpu_s": 0.0, "client_cpu_s": 0.0} for key in targets
    }
    async with AsyncExitStack() as stack:
        performers = {key: await target.open(stack) for key, target in targets.items()}
        for perform in performers.values():  # warm-up: discovery, caches, connections
            await sequential(perform, calls[: max(warmup, len(KINDS))], Sequential())
        share = max(1, len(calls) // rounds)
        keys = list(targets)
        for r in range(rounds):
            chunk = calls[r * share : (r + 1) * share]
            for key in keys[r % len(keys) :] + keys[: r % len(keys)]:
                pid = targets[key].pid
                before, server_before, client_before = double.stats(), _cpu(pid), time.process_time()
                await sequential(performers[key], chunk, results[key])
                delta = double.stats().minus(before)
                meters[key]["requests"] += delta.count
                meters[key]["double_s"] += delta.busy_s
                meters[key]["server_cpu_s"] += _cpu(pid) - server_before
                meters[key]["client_cpu_s"] += time.process_time() - client_before
    out: dict[str, dict[str, Any]] = {}
    for key, result in results.items():
        done = len(result.seconds) + result.errors
        if not result.seconds:
            out[key] = {"errors": result.errors, "calls": 0, "first_error": result.first_error}
            continue
        meter = meters[key]
        out[key] = {
            **latency_summary(result.seconds),
            "errors": result.errors,
            "first_error": result.first_error,
            "median_ms_by_kind": {k: statistics.median(v) * 1000 for k, v in result.by_kind.items()},
            "nextcloud_requests_per_call": meter["requests"] / done,
            "double_ms_per_call": meter["double_s"] * 1000 / done,
            "server_cpu_ms_per_call": None
            if targets[key].pid is None
            else meter["server_cpu_s"] * 1000 / done,
            "client_cpu_ms_per_call": meter["client_cpu_s"] * 1000 / done,
        }
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _cpu(pid: int | None) -> float:
    return cpu_seconds(pid) if pid is not None else 0.0


def measure(
    calls: int,
    duration: float,
    rounds: int,
    skip_published: bool,
    notes: int,
    files: int,
    tput_rounds: int = 2,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-tool-calls-") as tmp:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=notes, files=files, folder=FOLDER)
        with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as double:
            ids = note_ids(double.url)
            with ExitStack() as servers:
                creds = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD}
                ours = servers.enter_context(our_server(double.url, creds, work))
                targets: dict[str, Target] = {
                    "direct": direct_target(double.url, USER, APP_PASSWORD),
                    "ours": mcp_target(ours),
                }
                if not skip_published:
                    published = servers.enter_context(published_server(double.url, USER, APP_PASSWORD, work))
                    targets["published"] = mcp_target(published)
                mix = call_mix(KINDS, ids, FOLDER, calls)
                with sdk_floor_server(double.url, USER, APP_PASSWORD, work) as floor:  # latency only
                    with_floor = {**targets, "sdk_floor": mcp_target(floor)}
                    lat = run(latency(with_floor, double, mix, rounds, warmup=6))
                calls_for = worker_calls(ids)
                windows: dict[tuple[str, int], list[Throughput]] = {}
                for turn in range(tput_rounds):  # rounds of windows, targets alternating
                    for level in LEVELS:
                        order = list(targets.items())
                        for key, target in order[turn % len(order) :] + order[: turn % len(order)]:
                            result = run(
                                throughput(target, level, calls_for, duration=duration, double=double)
                            )
                            windows.setdefault((key, level), []).append(result)
                tput: dict[str, dict[str, Any]] = {key: {} for key in targets}
                for (key, level), runs in windows.items():
                    tput[key][str(level)] = Throughput.merged(runs).as_dict()
    names = {key: target.name for key, target in targets.items()}
    names["sdk_floor"] = floor.name
    median = {key: r.get("median_ms") for key, r in lat.items()}
    per_s = {key: levels["64"]["calls_per_s"] for key, levels in tput.items()}
    ratios = {
        "median_ours_over_direct": _ratio(median["ours"], median["direct"]),
        "median_published_over_ours": _ratio(median.get("published"), median["ours"]),
        # What any server on this SDK pays, and what this one adds to it.
        "median_sdk_floor_over_direct": _ratio(median["sdk_floor"], median["direct"]),
        "median_ours_over_sdk_floor": _ratio(median["ours"], median["sdk_floor"]),
        "tput64_ours_over_published": _ratio(per_s["ours"], per_s.get("published")),
        # Flat in the number of sessions (#18): server CPU per call at 64 sessions over at 16.
        "cpu64_over_cpu16_ours": _ratio(
            tput["ours"]["64"]["cpu_ms_per_call"]["server"], tput["ours"]["16"]["cpu_ms_per_call"]["server"]
        ),
        # No connection churn (#18): connections the double accepted from this server, per 10 s.
        "new_connections_per_10s_at_64_ours": tput["ours"]["64"]["nextcloud_new_connections"]
        * 10
        / tput["ours"]["64"]["seconds"],
    }
    return {
        "config": {
            "calls": calls,
            "rounds": rounds,
            "duration_s": duration,
            "throughput_rounds": tput_rounds,
            "notes": notes,
            "files_in_folder": files,
            "mix": list(KINDS),
            "levels": list(LEVELS),
        },
        "targets": names,
        "latency": lat,
        "throughput": tput,
        "ratios": ratios,
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(result: dict[str, Any]) -> None:
    config, lat, tput, names = result["config"], result["latency"], result["throughput"], result["targets"]
    print(
        f"tools/call at concurrency 1: mix {' / '.join(config['mix'])} ({config['notes']} notes, a folder of "
        f"{config['files_in_folder']} files); {config['calls']} calls per target in {config['rounds']} "
        "interleaved rounds"
    )
    header = f"{'target':<38}{'median':>8}{'p95':>8}" + "".join(f"{k:>12}" for k in config["mix"])
    print(header + f"{'NC req':>8}{'in double':>10}{'srv CPU':>9}{'cli CPU':>9}{'err':>5}")
    for key, r in lat.items():
        if not r.get("calls"):
            print(
                f"{names[key]:<38} no successful call ({r.get('errors', 0)} errors: {r.get('first_error')})"
            )
            continue
        kinds = "".join(f"{_ms(r['median_ms_by_kind'].get(k)):>12}" for k in config["mix"])
        print(
            f"{names[key]:<38}{r['median_ms']:>8.2f}{r['p95_ms']:>8.2f}{kinds}"
            f"{r['nextcloud_requests_per_call']:>8.2f}{r['double_ms_per_call']:>10.2f}"
            f"{_ms(r['server_cpu_ms_per_call']):>9}{r['client_cpu_ms_per_call']:>9.2f}{r['errors']:>5}"
        )
    ratios = result["ratios"]
    floor_ratio = ratios.get("median_sdk_floor_over_direct")
    ours_ratio = ratios.get("median_ours_over_sdk_floor")
    if floor_ratio and ours_ratio:
        print(
            f"  median over direct HTTP: SDK floor {floor_ratio:.2f}x, this server "
            f"{ratios['median_ours_over_direct']:.2f}x ({ours_ratio:.2f}x the SDK floor)"
        )
    print("  (ms; NC req = Nextcloud requests per call; in double = time inside the double per call;")
    print("   srv/cli CPU = CPU ms per call of the server process / this client process)")
    print(
        f"throughput: one session per worker; {config['throughput_rounds']} window(s) of "
        f"{config['duration_s']:.0f} s per target and level, targets alternating"
    )
    columns = ("sessions", 9), ("calls/s", 9), ("ceiling", 9), ("srv CPU", 9), ("dbl CPU", 9), ("cli CPU", 9)
    print(
        f"{'target':<38}"
        + "".join(f"{c:>{w}}" for c, w in columns)
        + f"{'NC req':>8}{'new conn':>10}{'err':>5}"
    )
    for key, levels in tput.items():
        for n in config["levels"]:
            r = levels[str(n)]
            cpu = r["cpu_ms_per_call"]
            print(
                f"{names[key]:<38}{n:>9}{r['calls_per_s']:>9.1f}{r['cpu_ceiling_calls_per_s'] or 0:>9.1f}"
                f"{_ms(cpu['server']):>9}{cpu['double']:>9.2f}"
                f"{cpu['client']:>9.2f}{r['nextcloud_requests_per_call']:>8.2f}"
                f"{r['nextcloud_new_connections']:>10}{r['errors']:>5}"
            )
    for key, levels in tput.items():
        for n, r in levels.items():
            if r["errors"]:
                print(f"  {names[key]} at {n} sessions, first error: {r['first_error']}")
    for key, r in lat.items():
        if r.get("errors") and r.get("calls"):
            print(f"  {names[key]} at concurrency 1, first error: {r['first_error']}")
    for key, levels in tput.items():
        low, high = levels["16"]["cpu_ms_per_call"]["server"], levels["64"]["cpu_ms_per_call"]["server"]
        if low and high:
            print(
                f"  {names[key]}: server CPU per call at 64 sessions / at 16 = {high:.2f} / {low:.2f} ms "
                f"= {high / low:.2f}x"
            )
    print("  (ceiling = calls/s the machine's cores allow at this CPU per call of server + double + client;")
    print("   CPU in ms per call; NC req = Nextcloud requests per call; new conn = TCP connections the")
    print("   double accepted during the window: a pool that keeps its connections opens none)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per target at concurrency 1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per throughput window")
    parser.add_argument("--tput-rounds", type=int, default=2, help="throughput windows per target and level")
    parser.add_argument("--notes", type=int, default=50)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--skip-published", action="store_true")
    args = parser.parse_args()
    result = measure(
        args.calls, args.duration, args.rounds, args.skip_published, args.notes, args.files, args.tput_rounds
    )
    report(result)
    write_result("tool_calls", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
