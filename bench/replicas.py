"""Replicas: tools/call throughput of one replica, and of two behind nginx (the shipped
deploy/nginx/nextcloud-mcp.conf, session ids routed by their replica prefix).

Three windows, same call mix (folder listing + file read against the metered double), same number
of concurrent sessions: (1) one replica, reached directly; (2) one replica behind nginx (the
proxy's own cost); (3) two replicas behind nginx, sessions spread by nginx's round robin. Single-
user mode: the figures show the routing and proxy overhead, not the store (PostgreSQL is only
asked at consent and token refresh). On 2 cores, two replicas are not expected to be faster.

    .venv/bin/python bench/replicas.py [--sessions 16] [--duration 10] [--rounds 2]
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
from _mcp import Server, Throughput, call_mix, mcp_target, our_server, run, throughput
from _procs import free_port, write_result

from nextcloud_mcp_server.storage.crypto import generate_key
from tests.nginx import running_nginx

USER = "bench"
APP_PASSWORD = "bench-app-password"
FOLDER = "bench"
KEY = generate_key()
KINDS = ("webdav_list", "file_read")


def measure(sessions: int, duration: float, rounds: int = 2) -> dict[str, Any]:
    out: dict[str, Any] = {
        "config": {"sessions": sessions, "duration_s": duration, "rounds": rounds, "mix": KINDS}
    }

    def calls_for(index: int) -> Any:
        turned = KINDS[index % len(KINDS) :] + KINDS[: index % len(KINDS)]
        return call_mix(turned, [0], FOLDER, 200)

    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        seed_user(work / "double", USER, notes=0, files=50, folder=FOLDER)
        double = stack.enter_context(
            running_double(work / "double", [(USER, APP_PASSWORD)], log=work / "d.log")
        )
        # replicas share a key: a 2026-07-28 call's requestState is read by any of them (ADR 0055)
        env = {"NEXTCLOUD_USERNAME": USER, "NEXTCLOUD_PASSWORD": APP_PASSWORD, "TOKEN_ENCRYPTION_KEY": KEY}
        a = stack.enter_context(our_server(double.url, {**env, "REPLICA_ID": "a"}, work, port=free_port()))
        b = stack.enter_context(our_server(double.url, {**env, "REPLICA_ID": "b"}, work, port=free_port()))
        one_proxy = stack.enter_context(
            running_nginx({"mcp-a:8000": _hostport(a), "mcp-b:8000": _hostport(a)})
        )
        two_proxy = stack.enter_context(
            running_nginx({"mcp-a:8000": _hostport(a), "mcp-b:8000": _hostport(b)})
        )
        targets = {
            "one_direct": mcp_target(a),
            "one_behind_nginx": mcp_target(
                Server("one replica behind nginx", f"{one_proxy}/mcp", a.pid, a.log)
            ),
            # CPU is accounted to replica a only: compare calls/s, not server CPU, for this window.
            "two_behind_nginx": mcp_target(
                Server("two replicas behind nginx", f"{two_proxy}/mcp", a.pid, a.log)
            ),
        }
        windows: dict[str, list[Throughput]] = {key: [] for key in targets}
        order = list(targets)
        for turn in range(rounds):
            for key in order[turn % len(order) :] + order[: turn % len(order)]:
                window = throughput(targets[key], sessions, calls_for, duration=duration, double=double)
                windows[key].append(run(window))
    out["windows"] = {key: Throughput.merged(runs).as_dict() for key, runs in windows.items()}
    direct = out["windows"]["one_direct"]["calls_per_s"]
    out["ratios"] = {
        key: (value["calls_per_s"] / direct if direct else None) for key, value in out["windows"].items()
    }
    return out


def _hostport(server: Server) -> str:
    return server.url.removeprefix("http://").removesuffix("/mcp")


def report(result: dict[str, Any]) -> None:
    config = result["config"]
    print(
        f"replicas: {config['sessions']} concurrent sessions, {config['rounds']} x "
        f"{config['duration_s']:.0f} s windows, mix {'+'.join(config['mix'])}, single-user mode"
    )
    print(f"{'':<22}{'calls/s':>10}{'vs direct':>11}{'errors':>8}")
    for key, window in result["windows"].items():
        ratio = result["ratios"][key]
        shown = f"{ratio:.2f}x" if ratio is not None else "-"
        print(f"{key:<22}{window['calls_per_s']:>10.1f}{shown:>11}{window['errors']:>8}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    result = measure(args.sessions, args.duration, args.rounds)
    report(result)
    write_result("replicas", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
