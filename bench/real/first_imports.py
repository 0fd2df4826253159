"""What a new process imports for its first call, and what that costs: this server started over
stdio against the seeded real Nextcloud with `-X importtime`, `initialize` and `tools/list`
answered, a pause (`--pause`, the time a host and its model take before a first call), then one
call per tool (each in its own new process). Prints per tool the first call's wall time and the
modules imported after `tools/list` (cumulative microseconds, largest first).

    .venv/bin/python bench/real/first_imports.py [--version 34] [--pause 0] [--only notes_list,...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import clean_env
from cases import cases
from mcp import ClientSession, StdioServerParameters, stdio_client
from seed import Instance


def _imports(lines: list[str]) -> list[tuple[int, str]]:
    """(cumulative us, module) of the top-level imports in `-X importtime` lines."""
    out = []
    for line in lines:
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) < 3 or "cumulative" in line:
            continue
        name = parts[2].rstrip()
        if name.startswith("  "):  # nested: counted in its parent's cumulative time
            continue
        out.append((int(parts[1]), name.strip()))
    return sorted(out, reverse=True)


async def one(env: dict[str, str], work: Path, tool: str, args: dict[str, object], pause: float) -> None:
    log = work / f"{tool}.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-X", "importtime", "-m", "nextcloud_mcp_server", "run"],
        env=env,
        cwd=work,
    )
    with open(log, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await asyncio.sleep(pause)
            errlog.flush()
            before = len(log.read_text().splitlines())
            started = time.perf_counter()
            result = await session.call_tool(tool, args)
            seconds = time.perf_counter() - started
            await asyncio.sleep(0.2)
    lines = log.read_text().splitlines()
    after = _imports(lines[before:])
    total = sum(us for us, _ in after)
    print(
        f"{tool:40} first call {seconds * 1000:6.0f} ms  error={result.is_error}  imported after tools/list: "
        f"{len(after)} top-level, {total / 1000:.0f} ms"
    )
    for us, name in after[:8]:
        print(f"    {us / 1000:7.1f} ms  {name}")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="34", choices=("29", "34"))
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    instance = Instance(args.version)
    cfg, manifest = instance.config, instance.manifest
    env = clean_env(
        {
            "NEXTCLOUD_HOST": cfg["url"],
            "NEXTCLOUD_USERNAME": "alice",
            "NEXTCLOUD_PASSWORD": cfg["alice"]["app_password"],
            "LOG_LEVEL": "WARNING",
        }
    )
    only = frozenset(filter(None, args.only.split(",")))
    with tempfile.TemporaryDirectory(prefix="bench-first-imports-") as tmp:
        for case in cases(manifest):
            if only and case.id not in only:
                continue
            await one(env, Path(tmp), case.tool, case.args, args.pause)
    print(f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
