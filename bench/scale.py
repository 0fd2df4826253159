"""Scale: what an open MCP session costs in memory, and throughput with many users in OAuth mode.

(a) Memory per idle session: open N streamable-HTTP sessions (initialize + initialized, no tool
    call; sessions keep no TCP connection, at most 8 connections are open at once) and read the
    server's VmRSS before and after. Checks afterwards that the first and last sessions are still
    known to the server. Also for the published package unless --skip-published.
(b) Throughput with 50 users: OAuth mode (pass-through; tokens for 50 users from the test IdP,
    npm oidc-provider; the double accepts the same tokens) against single-user mode, with 50
    concurrent sessions each (one per user in OAuth mode). The call mix is files only (folder
    listing + file read): the double, like Nextcloud 29, refuses Bearer tokens on the Notes API.

    .venv/bin/python bench/scale.py [--sessions 1000] [--users 50] [--duration 10] [--skip-published]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _double import Double, running_double, seed_user
from _mcp import Server, Throughput, call_mix, mcp_target, our_server, published_server, run, throughput
from _procs import free_port, rss_kib, write_result

from tests.oidc import running_idp

APP_PASSWORD = "bench-app-password"
FOLDER = "bench"
PROTOCOL = "2025-11-25"
KINDS = ("webdav_list", "file_read")
CONNECTIONS = 8
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _payload(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a POST answer, sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                return dict(json.loads(line[5:]))
        raise RuntimeError("no data in the event stream")
    return dict(response.json())


async def open_idle_sessions(url: str, count: int) -> list[str]:
    """`count` initialized sessions; their ids."""
    limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    async with httpx.AsyncClient(limits=limits, timeout=30, headers=MCP_HEADERS) as client:
        gate = asyncio.Semaphore(CONNECTIONS)

        async def one(i: int) -> str:
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": f"idle-{i}", "version": "0"},
                },
            }
            async with gate:
                answer = await client.post(url, json=initialize)
                if answer.status_code != 200 or "mcp-session-id" not in answer.headers:
                    raise RuntimeError(f"initialize answered {answer.status_code}: {answer.text[:200]}")
                session = answer.headers["mcp-session-id"]
                version = _payload(answer)["result"]["protocolVersion"]
                headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": version}
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                done = await client.post(url, json=note, headers=headers)
                if done.status_code not in (200, 202):
                    raise RuntimeError(f"notifications/initialized answered {done.status_code}")
                return session

        return list(await asyncio.gather(*(one(i) for i in range(count))))


async def still_open(url: str, sessions: list[str]) -> bool:
    async with httpx.AsyncClient(timeout=30, headers=MCP_HEADERS) as client:
        for session in sessions:
            headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": PROTOCOL}
            answer = await client.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers
            )
            if answer.status_code != 200 or "result" not in _payload(answer):
                return False
    return True


def idle_memory(server: Server, count: int, warmup: int = 20) -> dict[str, Any]:
    run(asyncio.wait_for(open_idle_sessions(server.url, warmup), 120))  # code paths and pools warmed
    time.sleep(1.0)
    before = rss_kib(server.pid)
    started = time.perf_counter()
    sessions = run(asyncio.wait_for(open_idle_sessions(server.url, count), 600))
    opened_s = time.perf_counter() - started
    time.sleep(1.0)
    after = rss_kib(server.pid)
    alive = run(asyncio.wait_for(still_open(server.url, [sessions[0], sessions[-1]]), 60))
    return {
        "sessions": count,
        "open_seconds": opened_s,
        "rss_before_mib": before / 1024,
        "rss_after_mib": after / 1024,
        "peak_rss_mib": rss_kib(server.pid, "VmHWM:") / 1024,
        "kib_per_session": (after - before) / count,
        "sessions_still_open": alive,
    }


def oauth_tokens(idp: Any, users: list[str], resource: str) -> list[str]:
    return [idp.access_token(user=user, resource=resource) for user in users]


def many_users(
    double: Double, idp: Any, users: list[str], duration: float, rounds: int, logdir: Path
) -> dict[str, dict[str, Any]]:
    """Both servers up at once; their windows alternate, `rounds` each."""

    def calls_for(index: int) -> Any:
        turned = KINDS[index % len(KINDS) :] + KINDS[: index % len(KINDS)]
        return call_mix(turned, [0], FOLDER, 200)

    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    started = time.perf_counter()
    tokens = oauth_tokens(idp, users, resource)
    token_seconds = time.perf_counter() - started
    single_env = {"NEXTCLOUD_USERNAME": users[0], "NEXTCLOUD_PASSWORD": APP_PASSWORD}
    oauth_env = {"OIDC_ISSUER": idp.issuer, "MCP_PUBLIC_URL": resource}
    windows: dict[str, list[Throughput]] = {"single_user": [], "oauth": []}
    with (
        our_server(double.url, single_env, logdir) as single,
        our_server(double.url, oauth_env, logdir, port=port) as oauth,
    ):
        targets = {
            "single_user": mcp_target(single),
            # Sessions are numbered across windows; session i is always user i mod 50.
            "oauth": mcp_target(
                oauth, headers=lambda i: {"Authorization": f"Bearer {tokens[i % len(tokens)]}"}
            ),
        }
        order = list(targets)
        for turn in range(rounds):
            for key in order[turn % 2 :] + order[: turn % 2]:
                window = throughput(targets[key], len(users), calls_for, duration=duration, double=double)
                windows[key].append(run(window))
    results = {key: Throughput.merged(runs).as_dict() for key, runs in windows.items()}
    results["oauth"] |= {"users": len(users), "token_seconds": token_seconds}
    return results


def measure(
    sessions: int, users: int, duration: float, skip_published: bool, rounds: int = 2
) -> dict[str, Any]:
    names = [f"user{i:02}" for i in range(users)]
    out: dict[str, Any] = {
        "config": {
            "sessions": sessions,
            "users": users,
            "duration_s": duration,
            "rounds": rounds,
            "mix": KINDS,
        }
    }
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        for name in names:
            seed_user(work / "double", name, notes=0, files=50, folder=FOLDER)
        try:
            idp = stack.enter_context(running_idp())
        except RuntimeError as exc:  # Node or the IdP's node_modules missing
            idp, out["oauth_skipped"] = None, str(exc)
        accounts = [(name, APP_PASSWORD) for name in names]
        issuer = idp.issuer if idp is not None else None
        double = stack.enter_context(
            running_double(work / "double", accounts, idp_issuer=issuer, log=work / "d.log")
        )
        idle: dict[str, Any] = {}
        single_env = {"NEXTCLOUD_USERNAME": names[0], "NEXTCLOUD_PASSWORD": APP_PASSWORD}
        with our_server(double.url, single_env, work) as ours:
            idle["ours"] = idle_memory(ours, sessions)
        if not skip_published:
            with published_server(double.url, names[0], APP_PASSWORD, work) as published:
                idle["published"] = idle_memory(published, sessions)
        out["idle_sessions"] = idle
        if idp is not None:
            out["many_users"] = many_users(double, idp, names, duration, rounds, work)
    if "many_users" in out:
        single, oauth = out["many_users"]["single_user"], out["many_users"]["oauth"]
        out["oauth_over_single"] = (
            oauth["calls_per_s"] / single["calls_per_s"] if single["calls_per_s"] else None
        )
    return out


def report(result: dict[str, Any]) -> None:
    config = result["config"]
    print(
        f"(a) idle sessions: {config['sessions']} initialized streamable-HTTP sessions, no tool call, "
        f"at most {CONNECTIONS} connections open"
    )
    print(f"{'server':<38}{'RSS before':>12}{'RSS after':>11}{'KiB/session':>13}{'open s':>8}{'alive':>7}")
    names = {"ours": "nextcloud-mcp-server (this)", "published": "nextcloud-mcp-server 0.202.1 (PyPI)"}
    for key, r in result["idle_sessions"].items():
        print(
            f"{names[key]:<38}{r['rss_before_mib']:>9.1f}MiB{r['rss_after_mib']:>8.1f}MiB"
            f"{r['kib_per_session']:>13.1f}{r['open_seconds']:>8.1f}"
            f"{'yes' if r['sessions_still_open'] else 'NO':>7}"
        )
    if "many_users" not in result:
        print(f"(b) skipped: {result.get('oauth_skipped')}")
        return
    many = result["many_users"]
    print(
        f"(b) {config['users']} concurrent sessions, mix {' / '.join(config['mix'])}, "
        f"{config['rounds']} alternating window(s) of {config['duration_s']:.0f} s per mode (this server)"
    )
    print(f"{'mode':<38}{'calls/s':>9}{'ceiling':>9}{'errors':>8}   CPU ms/call server/double/client")
    labels = {
        "single_user": "single-user (one app password)",
        "oauth": f"OAuth, {config['users']} users (pass-through)",
    }
    for key, r in many.items():
        cpu = r["cpu_ms_per_call"]
        print(
            f"{labels[key]:<38}{r['calls_per_s']:>9.1f}{r['cpu_ceiling_calls_per_s'] or 0:>9.1f}"
            f"{r['errors']:>8}   "
            f"{cpu['server']:.2f}/{cpu['double']:.2f}/{cpu['client']:.2f}"
        )
    for key, r in many.items():
        if r["errors"]:
            print(f"  {labels[key]}: first error: {r['first_error']}")
    ratio = result.get("oauth_over_single")
    if ratio is not None:
        print(
            f"OAuth throughput is {ratio:.2f}x single-user "
            f"({many['oauth']['token_seconds']:.1f} s to get the tokens)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2, help="throughput windows per mode, alternating")
    parser.add_argument("--skip-published", action="store_true")
    args = parser.parse_args()
    result = measure(args.sessions, args.users, args.duration, args.skip_published, args.rounds)
    report(result)
    write_result("scale", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
