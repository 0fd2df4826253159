"""A/B: two builds of this server against one Nextcloud double, throughput windows interleaved.

On a shared, noisy machine absolute figures drift from minute to minute; windows of A and B that
alternate on the same load make their ratio meaningful. B is this checkout; A is another checkout
of the package (e.g. `git archive <commit> | tar -x -C /tmp/base`), imported first via PYTHONPATH.
Reports, per build and level: calls/s, server CPU ms per call (process CPU time, not wall), and new
connections to the double per window; then B/A ratios and each build's CPU(64)/CPU(16).

    .venv/bin/python bench/ab_servers.py --base /tmp/base [--duration 5] [--rounds 3] [--levels 16,64]
    .venv/bin/python bench/ab_servers.py --base /tmp/base --env-b UVICORN_LOOP=uvloop   (one setting)
    .venv/bin/python bench/ab_servers.py --base /tmp/base --latency 600   (concurrency 1 instead)

With `--latency N`: N calls of the mix per build at concurrency 1, in rounds that alternate A and
B (the latency part of tool_calls.py): median and p95 ms, server and client CPU ms per call.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _double import running_double, seed_user
from _mcp import Throughput, call_mix, mcp_target, our_server, run, throughput
from tool_calls import APP_PASSWORD, FOLDER, KINDS, USER, latency, note_ids, worker_calls


def _env(pairs: list[str]) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, help="checkout for A (default: this one, e.g. with --env-b)")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--levels", default="16,64")
    parser.add_argument("--env-a", action="append", default=[], help="NAME=value for A")
    parser.add_argument("--env-b", action="append", default=[], help="NAME=value for B")
    parser.add_argument("--latency", type=int, default=0, help="N calls per build at concurrency 1")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    creds = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD}
    env_a = {**creds, **_env(args.env_a)}
    if args.base is not None:
        env_a["PYTHONPATH"] = str(args.base.resolve())
    env_b = {**creds, **_env(args.env_b)}
    windows: dict[tuple[str, int], list[Throughput]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=50, files=50, folder=FOLDER)
        with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as double:
            calls_for = worker_calls(note_ids(double.url))
            with ExitStack() as servers:
                targets = {
                    "A": mcp_target(servers.enter_context(our_server(double.url, env_a, work))),
                    "B": mcp_target(servers.enter_context(our_server(double.url, env_b, work))),
                }
                if args.latency:
                    ids = note_ids(double.url)
                    calls = call_mix(KINDS, ids, FOLDER, args.latency)
                    rounds = max(2, args.latency // 50)
                    measured = run(latency(targets, double, calls, rounds=rounds, warmup=30))
                    _report_latency(measured)
                    return 0
                for turn in range(args.rounds):
                    for level in levels:
                        order = ["A", "B"] if turn % 2 == 0 else ["B", "A"]
                        for key in order:
                            result = run(
                                throughput(
                                    targets[key], level, calls_for, duration=args.duration, double=double
                                )
                            )
                            windows.setdefault((key, level), []).append(result)
    summary: dict[str, dict[int, dict[str, Any]]] = {}
    print(f"{'build':<6}{'level':>6}{'calls/s':>9}{'cpu ms/call':>13}{'(per window)':>28}{'new conns':>11}")
    for (key, level), runs in sorted(windows.items()):
        merged = Throughput.merged(runs).as_dict()
        per_window = [
            (r.server_cpu_s or 0.0) * 1000 / max(r.calls, 1) for r in runs
        ]  # spread shows the noise
        summary.setdefault(key, {})[level] = merged
        print(
            f"{key:<6}{level:>6}{merged['calls_per_s']:>9.1f}{merged['cpu_ms_per_call']['server']:>13.2f}"
            f"{' '.join(f'{x:.2f}' for x in per_window):>28}{merged['nextcloud_new_connections']:>11}"
            + (f"  errors {merged['errors']}: {merged['first_error']}" if merged["errors"] else "")
        )
    for level in levels:
        a, b = summary["A"][level], summary["B"][level]
        cpu = b["cpu_ms_per_call"]["server"] / a["cpu_ms_per_call"]["server"]
        print(f"B/A at {level}: cpu/call {cpu:.3f}, calls/s {b['calls_per_s'] / a['calls_per_s']:.3f}")
    if len(levels) >= 2:
        low, high = min(levels), max(levels)
        for key in ("A", "B"):
            ratio = (
                summary[key][high]["cpu_ms_per_call"]["server"]
                / summary[key][low]["cpu_ms_per_call"]["server"]
            )
            print(f"{key}: cpu/call at {high} over {low}: {ratio:.3f}")
    return 0


def _report_latency(measured: dict[str, dict[str, Any]]) -> None:
    print(f"{'build':<6}{'median ms':>10}{'p95 ms':>9}{'server CPU':>12}{'client CPU':>12}  median by kind")
    for key in ("A", "B"):
        m = measured[key]
        kinds = " ".join(f"{k} {v:.2f}" for k, v in m.get("median_ms_by_kind", {}).items())
        print(
            f"{key:<6}{m['median_ms']:>10.2f}{m['p95_ms']:>9.2f}{m['server_cpu_ms_per_call']:>12.2f}"
            f"{m['client_cpu_ms_per_call']:>12.2f}  {kinds}"
        )
    a, b = measured["A"], measured["B"]
    print(
        f"B/A at concurrency 1: median {b['median_ms'] / a['median_ms']:.3f}, "
        f"server CPU per call {b['server_cpu_ms_per_call'] / a['server_cpu_ms_per_call']:.3f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
