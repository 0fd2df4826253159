"""Cold start: spawn over stdio until `tools/list` is answered, this server against a bare
MCPServer with one tool (the floor). Prints medians, peak RSS and ratios; writes JSON to
bench/results/cold_start.json.

    .venv/bin/python bench/cold_start.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _stdio import ColdStart, cold_start, summarize

HERE = Path(__file__).parent
# Single-user configuration; nothing is contacted before a tool is called.
ENV = {
    "NEXTCLOUD_HOST": "https://cloud.example.invalid",
    "NEXTCLOUD_USERNAME": "bench",
    "NEXTCLOUD_PASSWORD": "bench-app-password",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    commands = {
        "bare MCPServer (floor)": [sys.executable, str(HERE / "bare_server.py")],
        "nextcloud-mcp-server": [sys.executable, "-m", "nextcloud_mcp_server", "run"],
    }
    # One warm-up each, so the first run does not pay for compiling bytecode.
    for command in commands.values():
        cold_start(command, ENV)
    runs: dict[str, list[ColdStart]] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved, so drift affects both alike
        for name, command in commands.items():
            runs[name].append(cold_start(command, ENV))
    results = {name: summarize(r) for name, r in runs.items()}
    floor, ours = results["bare MCPServer (floor)"], results["nextcloud-mcp-server"]
    ratios = {
        "time_ratio": ours["median_s"] / floor["median_s"],
        "rss_ratio": ours["peak_rss_mib"] / floor["peak_rss_mib"],
    }
    print(f"cold start over stdio, spawn -> tools/list answered, {args.runs} runs each (interleaved)")
    print(f"{'server':<26}{'median':>9}{'min':>9}{'max':>9}{'peak RSS':>11}{'tools':>7}")
    for name, r in results.items():
        print(
            f"{name:<26}{r['median_s'] * 1000:>7.0f}ms{r['min_s'] * 1000:>7.0f}ms"
            f"{r['max_s'] * 1000:>7.0f}ms{r['peak_rss_mib']:>8.1f}MiB{r['tools']:>7.0f}"
        )
    print(f"ratio to the floor: time {ratios['time_ratio']:.2f}x, peak RSS {ratios['rss_ratio']:.2f}x")
    out = HERE / "results" / "cold_start.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"runs": args.runs, "results": results, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
