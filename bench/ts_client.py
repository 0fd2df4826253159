"""tools/call at concurrency 1 as the MCP TypeScript SDK's client sees it, next to the same
Nextcloud requests made directly with Node's fetch (the floor), against the Nextcloud double.

`tool_calls.py` measures with the Python SDK's client, which validates every result against the
tool's output schema with `jsonschema` (about 3 us per node: 1.2 ms for a listing of 50 notes).
The TypeScript SDK (what Claude Desktop is built on) compiles each output schema once with Ajv.
Same mix, same seeded double, same server settings as `tool_calls.py`; both targets run in one
Node process, in rounds that alternate.

    .venv/bin/python bench/ts_client.py [--calls 300] [--rounds 6] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _double import running_double, seed_user
from _mcp import call_mix, our_server
from _procs import ROOT, write_result
from tool_calls import APP_PASSWORD, FOLDER, KINDS, USER, note_ids

from nextcloud_mcp_server.nextcloud.dav.webdav import PROPFIND_BODY

NODE = ROOT / "tests" / "idp" / "node_modules" / ".bin" / "node"
SCRIPT = ROOT / "bench" / "ts_client.mjs"


def _summary(times: dict[str, list[float]]) -> dict[str, Any]:
    every = [t for kind in times.values() for t in kind]
    return {
        "median_ms": statistics.median(every),
        "median_ms_by_kind": {kind: statistics.median(values) for kind, values in times.items()},
        "calls": len(every),
    }


def measure(calls: int, rounds: int, repeat: int) -> dict[str, Any]:
    if not NODE.exists():
        raise SystemExit(f"{NODE} is missing: `make bench` installs it (npm ci in tests/idp)")
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-ts-client-") as tmp:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=50, files=50, folder=FOLDER)
        with running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "double.log") as double:
            mix = call_mix(KINDS, note_ids(double.url), FOLDER, calls)
            creds = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD}
            with our_server(double.url, creds, work) as server:
                config = {
                    "mcp": server.url,
                    "nextcloud": double.url,
                    "user": USER,
                    "password": APP_PASSWORD,
                    "calls": [{"kind": c.kind, "tool": c.tool, "args": c.args} for c in mix],
                    "rounds": rounds,
                    "propfind": PROPFIND_BODY,
                }
                for _ in range(repeat):
                    done = subprocess.run(
                        [str(NODE), str(SCRIPT), json.dumps(config)],
                        capture_output=True,
                        text=True,
                        timeout=600,
                        check=False,
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"ts_client.mjs failed ({done.returncode}): {done.stderr[-2000:]}")
                    times = json.loads(done.stdout)
                    direct, mcp = _summary(times["direct"]), _summary(times["mcp"])
                    ratio = mcp["median_ms"] / direct["median_ms"]
                    runs.append({"direct": direct, "mcp": mcp, "ratio": ratio})
    return {"config": {"calls": calls, "rounds": rounds, "mix": list(KINDS)}, "runs": runs}


def report(result: dict[str, Any]) -> None:
    config = result["config"]
    print(
        f"tools/call at concurrency 1 through the TypeScript SDK's client: mix {' / '.join(config['mix'])}, "
        f"{config['calls']} calls per target in {config['rounds']} alternating rounds, per run"
    )
    kinds = "".join(f"{k:>13}" for k in config["mix"])
    print(f"{'run':<5}{'target':<24}{'median':>8}{kinds}{'ratio':>8}")
    for number, run in enumerate(result["runs"], 1):
        for key, name in (("direct", "direct fetch (floor)"), ("mcp", "this server, TS client")):
            r = run[key]
            kinds = "".join(f"{r['median_ms_by_kind'].get(k, 0):>13.2f}" for k in config["mix"])
            ratio = f"{run['ratio']:>7.2f}x" if key == "mcp" else ""
            print(f"{number:<5}{name:<24}{r['median_ms']:>8.2f}{kinds}{ratio}")
    print("  (ms; the floor makes the Nextcloud requests this server makes for each tool, with fetch)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the Node client, one after another")
    args = parser.parse_args()
    result = measure(args.calls, args.rounds, args.repeat)
    report(result)
    write_result("ts_client", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
