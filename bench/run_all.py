"""All benchmarks side by side: this server, the floors (bare MCPServer, direct HTTP) and the
published PyPI package `nextcloud-mcp-server` 0.202.1 (a different project with the same name).

    .venv/bin/python bench/run_all.py [--quick] [--skip-published] [--parts cold_start,tool_calls,...]

Parts (each prints a table and writes bench/results/<part>.json):
  cold_start   spawn over stdio -> tools/list answered; median and peak RSS    (bench/cold_start.py)
  tool_calls   tools/call latency at concurrency 1, throughput at 16/64 sessions (bench/tool_calls.py)
  ts_client    the same latency through the TypeScript SDK's client, vs fetch   (bench/ts_client.py)
  scale        memory per idle session; 50 users in OAuth mode vs single-user   (bench/scale.py)
  profile      where the time of a tools/call goes (py-spy, if installed)       (bench/profile_call.py)
  replicas     calls/s of one replica, and of two behind nginx                  (bench/replicas.py)
Then PASS/MISS per target, and bench/results/summary.json. `--quick` runs few calls (a smoke test:
its figures are not to be quoted). The published package is installed on first use into
bench/.published-venv/ (minutes the first time). Exit status: 1 if a part failed, else 0 (a MISS
is a finding, not a failure).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cold_start
import profile_call
import replicas
import scale
import tool_calls
import ts_client
from _procs import write_result
from published import VERSION, ensure_installed

PARTS = ("cold_start", "tool_calls", "ts_client", "scale", "profile", "replicas")

SETTINGS = {
    "full": {
        "cold_start": {"runs": 15},
        "tool_calls": {
            "calls": 300,
            "rounds": 5,
            "duration": 10.0,
            "tput_rounds": 2,
            "notes": 50,
            "files": 50,
        },
        "ts_client": {"calls": 300, "rounds": 6, "repeat": 3},
        "scale": {"sessions": 1000, "users": 50, "duration": 10.0, "rounds": 2},
        "profile": {"calls": 150, "seconds": 8.0},
        "replicas": {"sessions": 16, "duration": 10.0, "rounds": 2},
    },
    "quick": {
        "cold_start": {"runs": 3},
        "tool_calls": {"calls": 60, "rounds": 3, "duration": 2.0, "tput_rounds": 1, "notes": 50, "files": 50},
        "ts_client": {"calls": 60, "rounds": 2, "repeat": 1},
        "scale": {"sessions": 200, "users": 50, "duration": 2.0, "rounds": 1},
        "profile": {"calls": 30, "seconds": 3.0},
        "replicas": {"sessions": 8, "duration": 2.0, "rounds": 1},
    },
}


def run_part(name: str, settings: dict[str, Any], skip_published: bool) -> dict[str, Any]:
    if name == "cold_start":
        result = cold_start.measure(settings["runs"], skip_published)
        cold_start.report(result)
    elif name == "tool_calls":
        result = tool_calls.measure(skip_published=skip_published, **settings)
        tool_calls.report(result)
    elif name == "ts_client":
        result = ts_client.measure(**settings)
        ts_client.report(result)
    elif name == "scale":
        result = scale.measure(skip_published=skip_published, **settings)
        scale.report(result)
    elif name == "profile":
        result = profile_call.measure(settings["calls"], settings["seconds"])
        profile_call.report(result)
    elif name == "replicas":
        result = replicas.measure(**settings)
        replicas.report(result)
    else:
        raise ValueError(name)
    write_result(name if name != "profile" else "profile_call", result)
    return result


def _get(results: dict[str, Any], *path: str) -> Any:
    value: Any = results
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


Check = Callable[[float], bool]


def targets(results: dict[str, Any], skip_published: bool) -> list[dict[str, Any]]:
    """Each target: what, the measured value, the verdict (PASS, MISS, SKIP, or ERROR)."""
    rows: list[tuple[str, str, tuple[str, ...], Check, str, bool]] = [
        (
            "cold start <= 1.3x the bare MCPServer floor",
            "cold_start",
            ("ratios", "time_ratio"),
            lambda v: v <= 1.3,
            "{:.2f}x",
            False,
        ),
        (
            "cold start >= 2x faster than the published package",
            "cold_start",
            ("ratios", "published_over_ours"),
            lambda v: v >= 2.0,
            "{:.2f}x faster",
            True,
        ),
        (
            "tools/call median <= 1.3x the direct-HTTP floor (concurrency 1; issue 7)",
            "tool_calls",
            ("ratios", "median_ours_over_direct"),
            lambda v: v <= 1.3,
            "{:.2f}x",
            False,
        ),
        (
            "throughput at 64 sessions >= 2x the published package (issue 7)",
            "tool_calls",
            ("ratios", "tput64_ours_over_published"),
            lambda v: v >= 2.0,
            "{:.2f}x",
            True,
        ),
        (
            "tools/call median <= 2x the direct-HTTP floor (concurrency 1; issue 18)",
            "tool_calls",
            ("ratios", "median_ours_over_direct"),
            lambda v: v <= 2.0,
            "{:.2f}x",
            False,
        ),
        (
            "throughput at 64 sessions >= 1.8x the published package (issue 18)",
            "tool_calls",
            ("ratios", "tput64_ours_over_published"),
            lambda v: v >= 1.8,
            "{:.2f}x",
            True,
        ),
        (
            "new connections to Nextcloud per 10 s at 64 sessions <= 64",
            "tool_calls",
            ("ratios", "new_connections_per_10s_at_64_ours"),
            lambda v: v <= 64,
            "{:.1f}",
            False,
        ),
        (
            "server CPU per call at 64 sessions <= 1.1x at 16 sessions",
            "tool_calls",
            ("ratios", "cpu64_over_cpu16_ours"),
            lambda v: v <= 1.1,
            "{:.2f}x",
            False,
        ),
        (
            "server CPU per call at 64 sessions <= 8 ms",
            "tool_calls",
            ("throughput", "ours", "64", "cpu_ms_per_call", "server"),
            lambda v: v <= 8.0,
            "{:.2f} ms",
            False,
        ),
        (
            "< 50 KiB per idle MCP session",
            "scale",
            ("idle_sessions", "ours", "kib_per_session"),
            lambda v: v < 50,
            "{:.1f} KiB",
            False,
        ),
    ]
    out = []
    for label, part, path, check, fmt, needs_published in rows:
        result = results.get(part)
        value = _get(result, *path) if isinstance(result, dict) else None
        if result is None:
            verdict, shown = "SKIP", "part not run"
        elif "error" in result:
            verdict, shown = "ERROR", "part failed"
        elif needs_published and skip_published:
            verdict, shown = "SKIP", "--skip-published"
        elif value is None:
            verdict, shown = "ERROR", "no figure"
        else:
            verdict, shown = ("PASS" if check(value) else "MISS"), fmt.format(value)
        if (
            part == "scale"
            and verdict == "PASS"
            and not _get(result, "idle_sessions", "ours", "sessions_still_open")
        ):
            verdict, shown = "ERROR", shown + " (sessions were closed by the server: figure invalid)"
        out.append({"target": label, "value": value, "shown": shown, "verdict": verdict})
    return out


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs: a smoke test, not a measurement")
    parser.add_argument("--skip-published", action="store_true", help="leave out the PyPI package")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated subset of {', '.join(PARTS)}"
    )
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s): {', '.join(unknown)}")
    mode = "quick" if args.quick else "full"
    started, load_before = time.time(), _load()
    print(
        f"bench/run_all.py ({mode}): {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {load_before}"
    )
    skip_published, install_error = args.skip_published, None
    if not skip_published:
        try:
            print(f"published package {VERSION}: {ensure_installed()}")
        except Exception as exc:  # no PyPI, no disk space: measure the rest
            install_error = f"{type(exc).__name__}: {exc}"
            print(f"could not install the published package ({install_error}); running without it")
            skip_published = True
    results: dict[str, Any] = {}
    failed = False
    for part in parts:
        print(f"\n=== {part} ===", flush=True)
        part_started = time.perf_counter()
        try:
            results[part] = run_part(part, SETTINGS[mode][part], skip_published)
        except Exception as exc:  # one part failing must not hide the others' figures
            traceback.print_exc()
            results[part] = {"error": f"{type(exc).__name__}: {exc}"}
            failed = True
        print(f"({part}: {time.perf_counter() - part_started:.0f} s)", flush=True)
    verdicts = targets(results, skip_published)
    print("\n=== targets ===")
    for row in verdicts:
        print(f"{row['verdict']:<6}{row['target']:<76}{row['shown']}")
    if mode == "quick":
        print("(--quick: few runs on whatever else the machine is doing; use a full run for figures)")
    summary = {
        "mode": mode,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": time.time() - started,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": load_before,
            "load_average_after": _load(),
        },
        "published_version": None if skip_published else VERSION,
        "published_install_error": install_error,
        "targets": verdicts,
        "parts": results,
    }
    out = write_result("summary", summary)
    print(f"results: {out.parent}/ (summary.json and one file per part)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
