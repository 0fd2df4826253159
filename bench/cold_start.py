"""Cold start: spawn over stdio until `tools/list` is answered, for this server, a bare MCPServer
with one tool (the floor) and the published PyPI package `nextcloud-mcp-server` 0.202.1 (a
different project with the same name; installed by bench/published.py). Runs are interleaved;
prints medians, peak RSS (VmHWM) and ratios; writes JSON to bench/results/cold_start.json.

The servers are configured for single-user mode against the Nextcloud double (started here): the
published package asks Nextcloud for its capabilities while answering `tools/list`, and would
spend seconds retrying against an address that does not answer. Nextcloud requests made during a
cold start are counted.

    .venv/bin/python bench/cold_start.py [--runs 15] [--skip-published] [--toolsets all]
        [--before ../other-checkout]

`--toolsets` is this server's NEXTCLOUD_MCP_TOOLSETS (default: the default toolsets); `--before`
adds another checkout's server (its own `.venv`), with the same settings, to the same rounds: a
before/after ratio that the machine's load affects alike.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _double import running_double, seed_user
from _mcp import published_env
from _procs import clean_env, write_result
from _stdio import ColdStart, cold_start, summarize
from published import ensure_installed

HERE = Path(__file__).resolve().parent
USER, APP_PASSWORD = "bench", "bench-app-password"
BARE = "bare MCPServer (floor)"
OURS = "nextcloud-mcp-server (this)"
PUBLISHED = "nextcloud-mcp-server 0.202.1 (PyPI)"
BEFORE = "nextcloud-mcp-server (--before)"


def measure(
    runs: int, skip_published: bool, toolsets: str | None = None, before: Path | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-cold-start-") as tmp:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=5, files=5)
        with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as double:
            creds = {
                "NEXTCLOUD_HOST": double.url,
                "NEXTCLOUD_USERNAME": USER,
                "NEXTCLOUD_PASSWORD": APP_PASSWORD,
            }
            chosen = {"NEXTCLOUD_MCP_TOOLSETS": toolsets} if toolsets else {}
            ours_env = clean_env({**creds, "LOG_LEVEL": "WARNING", **chosen})
            commands: dict[str, tuple[list[str], dict[str, str]]] = {
                BARE: ([sys.executable, str(HERE / "bare_server.py")], clean_env({})),
                OURS: ([sys.executable, "-m", "nextcloud_mcp_server", "run"], ours_env),
            }
            if before is not None:
                other = str(before.resolve() / ".venv" / "bin" / "python")
                commands[BEFORE] = ([other, "-m", "nextcloud_mcp_server", "run"], ours_env)
            if not skip_published:
                script = ensure_installed()
                env = published_env(double.url, USER, APP_PASSWORD, work)
                commands[PUBLISHED] = ([str(script), "run", "--transport", "stdio"], env)

            def once(name: str) -> tuple[ColdStart, int]:
                command, env = commands[name]
                before = double.stats().count
                result = cold_start(command, env, inherit_env=False, cwd=str(work))
                return result, double.stats().count - before

            for name in commands:  # one warm-up each: the first run may compile bytecode
                once(name)
            samples: dict[str, list[ColdStart]] = {name: [] for name in commands}
            requests: dict[str, int] = dict.fromkeys(commands, 0)
            for _ in range(runs):  # interleaved, so drift affects all alike
                for name in commands:
                    result, made = once(name)
                    samples[name].append(result)
                    requests[name] += made
    results: dict[str, dict[str, float]] = {}
    for name, runs_of in samples.items():
        results[name] = {**summarize(runs_of), "nextcloud_requests_per_start": requests[name] / runs}
    floor, ours = results[BARE], results[OURS]
    ratios: dict[str, float | None] = {
        "time_ratio": ours["median_s"] / floor["median_s"],
        "rss_ratio": ours["peak_rss_mib"] / floor["peak_rss_mib"],
        "published_over_ours": None,
        "before_over_ours": None,
        "before_rss_over_ours": None,
    }
    if BEFORE in results:
        ratios["before_over_ours"] = results[BEFORE]["median_s"] / ours["median_s"]
        ratios["before_rss_over_ours"] = results[BEFORE]["peak_rss_mib"] / ours["peak_rss_mib"]
    if PUBLISHED in results:
        ratios["published_over_ours"] = results[PUBLISHED]["median_s"] / ours["median_s"]
    return {"runs": runs, "toolsets": toolsets or "default", "results": results, "ratios": ratios}


def report(result: dict[str, Any]) -> None:
    print(
        f"cold start over stdio, spawn -> tools/list answered, {result['runs']} runs each (interleaved), "
        f"single-user mode against the Nextcloud double, NEXTCLOUD_MCP_TOOLSETS={result['toolsets']}"
    )
    print(f"{'server':<38}{'median':>9}{'min':>9}{'max':>9}{'peak RSS':>11}{'tools':>7}{'NC req':>8}")
    for name, r in result["results"].items():
        print(
            f"{name:<38}{r['median_s'] * 1000:>7.0f}ms{r['min_s'] * 1000:>7.0f}ms"
            f"{r['max_s'] * 1000:>7.0f}ms{r['peak_rss_mib']:>8.1f}MiB{r['tools']:>7.0f}"
            f"{r['nextcloud_requests_per_start']:>8.1f}"
        )
    ratios = result["ratios"]
    line = f"this server vs the floor: time {ratios['time_ratio']:.2f}x, peak RSS {ratios['rss_ratio']:.2f}x"
    if ratios["published_over_ours"] is not None:
        line += f"; the published package takes {ratios['published_over_ours']:.2f}x this server's time"
    if ratios["before_over_ours"] is not None:
        line += (
            f"; --before takes {ratios['before_over_ours']:.2f}x this server's time, "
            f"{ratios['before_rss_over_ours']:.2f}x its peak RSS"
        )
    print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skip-published", action="store_true")
    parser.add_argument("--toolsets", help="NEXTCLOUD_MCP_TOOLSETS of this server (default: default)")
    parser.add_argument("--before", type=Path, help="another checkout, measured in the same rounds")
    args = parser.parse_args()
    result = measure(args.runs, args.skip_published, args.toolsets, args.before)
    report(result)
    write_result("cold_start", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
