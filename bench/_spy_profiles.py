"""Sampling profiles for `profile_call.py` (parts 3 and 4): py-spy, if installed, records the
server, the double and this client during a run of the mix; each sample is charged to the
innermost frame of a named package and the shares applied to the process's measured CPU per call.
See `profile_call.py`'s docstring for why samples pause the process."""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from _double import Double
from _mcp import Call, Sequential, Server, call_mix, mcp_target, run, sequential, throughput
from _procs import ROOT, cpu_split
from tool_calls import worker_calls

__all__ = ["profiles", "summarize_profile"]

TRANSPARENT = {None, "anyio", "h11", "sniffio", "typing_extensions", "_pytest"}
ALIASES = {"pydantic_core": "pydantic", "mcp_types": "mcp", "httpcore": "httpx", "httpcore2": "httpx2"}


# --- 3. sampling profiles ------------------------------------------------------------------------


def _owner(frame: str) -> str | None:
    """The package a py-spy frame `func (path:line)` belongs to; None for stdlib and the like."""
    path = frame.rpartition(" (")[2].rstrip(")").rpartition(":")[0]
    if "site-packages/" in path:
        top = path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
        return ALIASES.get(top, top)
    root = str(ROOT) + "/"
    if path.startswith(root):
        return path[len(root) :].split("/", 1)[0].removesuffix(".py")
    return None


def summarize_profile(raw: str, top: int = 8) -> dict[str, Any]:
    by_owner: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        # Frames up to the event loop's dispatch (Handle._run) only run the loop: skip them.
        loop = [i for i, f in enumerate(frames) if f.startswith("Handle._run (") and "asyncio" in f]
        task_frames = frames[loop[-1] + 1 :] if loop else frames
        owner = next((o for f in reversed(task_frames) if (o := _owner(f)) not in TRANSPARENT), None)
        by_owner[owner or "stdlib (event loop, sockets, json, ...)"] += count
        leaf = frames[-1]
        name, _, where = leaf.rpartition(" (")
        leaves[f"{name} ({Path(where.rstrip(')')).name})"] += count
    return {
        "samples": total,
        "share_by_package": {k: v / total for k, v in by_owner.most_common()} if total else {},
        "top_leaf_frames": {k: v / total for k, v in leaves.most_common(top)} if total else {},
    }


def _py_spy() -> str | None:
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


async def _drive(server: Server, calls: list[Call], seconds: float) -> int:
    async with AsyncExitStack() as stack:
        perform = await mcp_target(server).open(stack)
        await sequential(perform, calls[:6], Sequential())
        result, deadline, i = Sequential(), time.perf_counter() + seconds, 0
        while time.perf_counter() < deadline:
            await sequential(perform, calls[i % len(calls) : i % len(calls) + 1], result)
            i += 1
    return len(result.seconds)


RATE_HZ = 250


def _start_spies(spy: str, pids: dict[str, int], seconds: float, work: Path, tag: str) -> dict[str, Any]:
    spies = {}
    for name, pid in pids.items():
        out = work / f"spy-{tag}-{name}.txt"
        args = [
            spy,
            "record",
            "--pid",
            str(pid),
            "--rate",
            str(RATE_HZ),
            "--duration",
            str(max(1, int(seconds))),
        ]
        args += ["--format", "raw", "--full-filenames", "--gil", "--output", str(out)]
        spies[name] = (subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), out)
    return spies


def _collect(spies: dict[str, Any], cpu_ms: dict[str, float], timeout: float) -> dict[str, Any]:
    """Wait for each py-spy; its shares applied to the process's measured CPU ms per call."""
    result: dict[str, Any] = {}
    for name, (process, out) in spies.items():
        try:
            _, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        if not out.exists():
            result[name] = {"error": err.decode(errors="replace")[-300:]}
            continue
        summary = summarize_profile(out.read_text())
        summary["cpu_ms_per_call"] = cpu_ms[name]
        summary["ms_per_call_by_package"] = {
            k: v * cpu_ms[name] for k, v in summary["share_by_package"].items()
        }
        result[name] = summary
    return result


def profiles(
    double: Double,
    server: Server,
    ids: list[int],
    seconds: float,
    work: Path,
    *,
    kinds: tuple[str, ...],
    folder: str,
) -> dict[str, Any]:
    """At concurrency 1 (one session, calls one after another) and with 64 sessions at once."""
    spy = _py_spy()
    if spy is None:
        return {"skipped": "py-spy is not installed (.venv/bin/pip install py-spy==0.4.3)"}
    pids = {"server": server.pid, "double": double.pid, "client": os.getpid()}
    spies = _start_spies(spy, pids, seconds + 1, work, "c1")
    time.sleep(0.5)  # attached
    before = {name: cpu_split(pid) for name, pid in pids.items()}
    calls = run(_drive(server, call_mix(kinds, ids, folder, 300), seconds))
    after = {name: cpu_split(pid) for name, pid in pids.items()}
    per_call = {name: (sum(after[name]) - sum(before[name])) * 1000 / max(calls, 1) for name in pids}
    single = _collect(spies, per_call, seconds + 30)
    for name in pids:
        if "error" not in single[name]:
            single[name]["system_cpu_ms_per_call"] = (after[name][1] - before[name][1]) * 1000 / max(calls, 1)
    out: dict[str, Any] = {"rate_hz": RATE_HZ, "concurrency_1": {"calls": calls, **single}}

    started: dict[str, Any] = {}
    # py-spy starts once all 64 sessions are open and warm; the window outlasts its sampling.
    result = run(
        throughput(
            mcp_target(server),
            64,
            worker_calls(ids),
            duration=seconds + 1.5,
            double=double,
            on_start=lambda: started.update(_start_spies(spy, pids, seconds, work, "c64")),
        )
    )
    cpu = result.as_dict()["cpu_ms_per_call"]
    many = _collect(started, {name: cpu[name] or 0.0 for name in pids}, seconds + 60)
    out["sessions_64"] = {"calls": result.calls, "calls_per_s": result.per_s, **many}
    return out


# --- all -----------------------------------------------------------------------------------------
