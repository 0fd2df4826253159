"""A client of the 2026-07-28 protocol through two round-robin replicas, with every real part.

The official Python SDK client pinned to 2026-07-28 makes `--calls` tool calls (default 1,000)
as alice through the shipped nginx configuration (round robin, no affinity) to two replicas that
share a PostgreSQL database, in front of the real Nextcloud 34 of the test kit with its OAuth2 app
as the consent provider. The first call asks for consent (answered through Nextcloud's pages, as
a browser would); every `--approve-every`th call is a delete that asks for approval (answered by
the client's elicitation callback), so the question and the answer usually reach different
replicas; the rest list a folder. Printed: answered and refused calls, wall time, calls per
second, latency percentiles, and how often Nextcloud's token endpoint was asked (one code
exchange and one refresh expected: the replicas share one access token).

    .venv/bin/python bench/replicas_2026.py [--calls 1000] [--concurrency 8] [--approve-every 50]

Needs what the suite's real-Nextcloud tests need (the kit, PostgreSQL, nginx, the IdP's npm
packages). It uses this checkout's Nextcloud 34 instance and resets it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import latency_summary, write_result
from mcp.types import ElicitResult

from tests.backends import Login, Nextcloud
from tests.nextcloud_pages import NextcloudPages
from tests.oidc import running_idp
from tests.postgres import postgres_cluster
from tests.real_nextcloud import Kit, instance_dir
from tests.replicas_real import client_at, real_replicas, token_requests
from tests.shared_instances import InstanceLock

LIST = ("nc_webdav_list_directory", {"path": "/"})


async def drive(
    nextcloud: Nextcloud, base: str, bearer: str, calls: int, concurrency: int, every: int
) -> dict[str, Any]:
    deletes = [f"bench-{n}.txt" for n in range(0, calls, every)]
    for name in deletes:
        nextcloud.put_file(nextcloud.alice, name, b"x")
    consents, approvals = 0, 0

    async def person(context: Any, params: Any) -> ElicitResult:
        nonlocal consents, approvals
        url = getattr(params, "url", None)
        if url:  # the consent: Nextcloud's pages, then back to the client
            consents += 1
            with NextcloudPages(nextcloud.url) as pages:
                await asyncio.to_thread(pages.follow, url, "alice", nextcloud.alice.password)
            return ElicitResult(action="accept")
        approvals += 1
        return ElicitResult(action="accept", content={"approve": True, "reason": ""})

    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    for n in range(calls):
        queue.put_nowait(
            ("nc_webdav_delete_resource", {"path": f"bench-{n}.txt"}) if n % every == 0 else LIST
        )
    latencies: list[float] = []
    refused: list[str] = []

    async def worker(client: Any, *, once: bool = False) -> None:
        while not queue.empty():
            name, arguments = queue.get_nowait()
            began = time.perf_counter()
            try:
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    refused.append(str(result.content[0].text)[:200])
                    continue
            except Exception as exc:
                refused.append(repr(exc)[:200])
                continue
            latencies.append(time.perf_counter() - began)
            if once:
                return

    async with client_at(base, bearer, elicitation_callback=person) as client:
        began = time.perf_counter()
        await worker(client, once=True)  # the first call alone: it asks for consent
        async with asyncio.TaskGroup() as group:
            for _ in range(concurrency):
                group.create_task(worker(client))
        wall = time.perf_counter() - began
    return {
        "answered": len(latencies),
        "refused": len(refused),
        "refusals": refused[:5],
        "consents": consents,
        "approvals": approvals,
        "wall_s": round(wall, 2),
        "calls_per_s": round(len(latencies) / wall, 1),
        "latency": latency_summary(latencies),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--approve-every", type=int, default=50)
    args = parser.parse_args()
    directory = instance_dir("34")
    lock = InstanceLock(directory)
    lock.acquire()
    try:
        instance = Kit.locate().start("34", directory)
        url = instance.reset()
        config = instance.config
        logins = {
            n: Login(n, config[n]["password"], config[n]["app_password"], n) for n in ("admin", "alice")
        }
        nextcloud = Nextcloud("real", url, logins["admin"], logins["alice"], instance=instance)
        with (
            tempfile.TemporaryDirectory(prefix="bench-replicas-2026-") as tmp,
            running_idp() as idp,
            postgres_cluster() as postgres,
            real_replicas(nextcloud, idp, postgres, Path(tmp)) as deployment,
        ):
            before = token_requests(nextcloud)
            result = asyncio.run(
                drive(
                    nextcloud,
                    deployment.base,
                    deployment.bearer,
                    args.calls,
                    args.concurrency,
                    args.approve_every,
                )
            )
            result["nextcloud_token_requests"] = token_requests(nextcloud) - before
            result["refreshes"] = deployment.rows("SELECT COUNT(*) FROM audit WHERE event = 'refreshed'")[0][
                0
            ]
    finally:
        lock.release()
    result["config"] = {
        "calls": args.calls,
        "concurrency": args.concurrency,
        "approve_every": args.approve_every,
    }
    out = write_result("replicas_2026", result)
    print(
        f"{result['answered']} answered, {result['refused']} refused of {args.calls} calls "
        f"({result['consents']} consent, {result['approvals']} approvals) in {result['wall_s']} s: "
        f"{result['calls_per_s']} calls/s; latency median {round(result['latency']['median_ms'])} ms, "
        f"p95 {round(result['latency']['p95_ms'])} ms; Nextcloud token endpoint asked "
        f"{result['nextcloud_token_requests']} times ({result['refreshes']} refresh); {out}"
    )
    return 0 if result["refused"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
