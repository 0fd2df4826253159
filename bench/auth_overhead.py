"""What authentication costs.

1. Per request: verifying a warm JWT (keys cached) with the server's verifier, next to a bare
   `jwt.decode` of the same token with the key at hand.
2. Per tool call: `tools/call` latency over streamable HTTP against the Nextcloud double, the
   single-user server (app password) against the OAuth server (bearer token validated here and
   reused for Nextcloud). Each runs as its own process; the double too.

    .venv/bin/python bench/auth_overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import jwt  # noqa: E402

from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier  # noqa: E402
from nextcloud_mcp_server.config import load_settings  # noqa: E402
from tests.mcp_clients import http_session  # noqa: E402
from tests.oidc import running_idp  # noqa: E402
from tests.processes import free_port, wait_for_http  # noqa: E402

APP_PASSWORD = "bench-app-password"


@contextmanager
def process(
    args: list[str], env: dict[str, str], ready: str | None = None
) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        args, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        if ready:
            wait_for_http(ready, proc)
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


async def verify_costs(issuer: str, token: str, resource: str, rounds: int) -> dict[str, float]:
    settings = load_settings(
        env_file=None, nextcloud_host="http://unused.invalid", oidc_issuer=issuer, mcp_public_url=resource
    )
    async with httpx.AsyncClient() as http:
        verifier = BearerTokenVerifier(settings, http)
        assert await verifier.verify_token(token) is not None  # warm: metadata and keys fetched
        key = await verifier.jwks.key_for(jwt.get_unverified_header(token)["kid"], "RS256")
        assert key is not None
        ours, bare = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            await verifier.verify_token(token)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            jwt.decode(token, key.key, algorithms=["RS256"], audience=resource, issuer=issuer)
            bare.append(time.perf_counter() - started)
    return {"verify_us": statistics.median(ours) * 1e6, "bare_decode_us": statistics.median(bare) * 1e6}


async def call_latency(mcp_url: str, headers: dict[str, str], calls: int) -> list[float]:
    timings = []
    async with http_session(mcp_url, headers=headers) as session:
        # Files, not notes: Nextcloud 29's Notes API refuses OAuth Bearer tokens (see README).
        written = await session.call_tool(
            "nc_webdav_write_file", {"path": "bench.txt", "content": "x" * 500, "overwrite": True}
        )
        assert not written.is_error, written.content
        for i in range(calls + 20):
            started = time.perf_counter()
            if i % 2:
                result = await session.call_tool("nc_webdav_read_file", {"path": "bench.txt"})
            else:
                result = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
            assert not result.is_error, result.content
            if i >= 20:  # warm-up excluded
                timings.append(time.perf_counter() - started)
    return timings


def summary(timings: list[float]) -> dict[str, float]:
    ordered = sorted(timings)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5000)
    args = parser.parse_args()
    with running_idp() as idp, tempfile.TemporaryDirectory() as data:
        double_cmd = [
            sys.executable,
            "-m",
            "tests.nextcloud_double",
            "--data",
            data,
            "--idp-issuer",
            idp.issuer,
        ]
        double_cmd += ["--user", f"admin:admin-login:{APP_PASSWORD}"]
        with process(double_cmd, {"PYTHONPATH": str(ROOT)}) as double:
            assert double.stdout is not None
            nextcloud = json.loads(double.stdout.readline())["url"]
            single_port, oauth_port = free_port(), free_port()
            oauth_mcp = f"http://127.0.0.1:{oauth_port}/mcp"
            token = idp.access_token(user="admin", resource=oauth_mcp)
            micro = asyncio.run(verify_costs(idp.issuer, token, oauth_mcp, args.rounds))
            server = [sys.executable, "-m", "nextcloud_mcp_server", "run", "--transport", "http", "--port"]
            base_env = {"NEXTCLOUD_HOST": nextcloud, "LOG_LEVEL": "WARNING"}
            single_env = {**base_env, "NEXTCLOUD_USERNAME": "admin", "NEXTCLOUD_PASSWORD": APP_PASSWORD}
            oauth_env = {**base_env, "OIDC_ISSUER": idp.issuer, "MCP_PUBLIC_URL": oauth_mcp}
            with (
                process([*server, str(single_port)], single_env, f"http://127.0.0.1:{single_port}/health"),
                process([*server, str(oauth_port)], oauth_env, f"http://127.0.0.1:{oauth_port}/health"),
            ):
                single = asyncio.run(call_latency(f"http://127.0.0.1:{single_port}/mcp", {}, args.calls))
                oauth = asyncio.run(call_latency(oauth_mcp, {"Authorization": f"Bearer {token}"}, args.calls))
    single_s, oauth_s = summary(single), summary(oauth)
    figures = {
        **micro,
        "single_user": single_s,
        "oauth": oauth_s,
        "call_ratio": oauth_s["median_ms"] / single_s["median_ms"],
        "verify_share_of_call": micro["verify_us"] / 1000 / oauth_s["median_ms"],
    }
    print(f"warm JWT verification: {micro['verify_us']:.0f} us", end=" ")
    print(f"(bare jwt.decode {micro['bare_decode_us']:.0f} us)")
    print(
        f"tools/call over HTTP, {args.calls} calls (file read + folder list): single-user median "
        f"{single_s['median_ms']:.2f} ms p95 {single_s['p95_ms']:.2f} ms; OAuth median "
        f"{oauth_s['median_ms']:.2f} ms p95 {oauth_s['p95_ms']:.2f} ms; ratio {figures['call_ratio']:.2f}x"
    )
    print(f"token verification is {figures['verify_share_of_call'] * 100:.1f}% of an OAuth tools/call")
    (ROOT / "bench" / "results" / "auth_overhead.json").write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
