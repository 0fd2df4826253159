"""Clients of the stateless 2026-07-28 protocol behind two replicas and the shipped nginx
configuration, round robin with no affinity (issue 39): the official SDK client pinned to
2026-07-28 makes its calls - approvals among them, each answered through whichever replica the
balancer picks next - and a replica killed mid-run costs at most the calls in flight on it.

Single-user mode on the double: what is shown here is the front (limits per era, the shared
requestState key, routing); the store under replicas is tested in test_replicas.py and
test_store_outage.py."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client

from nextcloud_mcp_server.storage.crypto import generate_key
from tests.conftest import ADMIN_APP_PASSWORD
from tests.kept_calls import KeptCalls
from tests.mcp_clients import Human, structured
from tests.nextcloud_double import NextcloudDouble
from tests.nginx import running_nginx
from tests.processes import free_port, server_process

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

LIST = ("nc_webdav_list_directory", {"path": "/"})


@dataclass
class TwoReplicas:
    mcp: str  # through nginx
    processes: dict[str, subprocess.Popen[str]]


@pytest.fixture
def replicas(double_url: str, tmp_path: Path) -> Iterator[TwoReplicas]:
    env = {
        "NEXTCLOUD_HOST": double_url,
        "NEXTCLOUD_USERNAME": "admin",
        "NEXTCLOUD_PASSWORD": ADMIN_APP_PASSWORD,
        "TOKEN_ENCRYPTION_KEY": generate_key(),  # the same on both: the requestState key
        "LOG_LEVEL": "WARNING",
    }
    ports = {"a": free_port(), "b": free_port()}
    with ExitStack() as stack:
        processes = {
            replica: stack.enter_context(
                server_process(
                    ["run", "--transport", "http", "--port", str(port)],
                    env={**env, "REPLICA_ID": replica},
                    cwd=tmp_path,
                    ready_url=f"http://127.0.0.1:{port}/health",
                )
            )
            for replica, port in ports.items()
        }
        upstreams = {f"mcp-{r}:8000": f"127.0.0.1:{port}" for r, port in ports.items()}
        base = stack.enter_context(running_nginx(upstreams))
        yield TwoReplicas(f"{base}/mcp", processes)


async def test_a_2026_client_with_approvals_through_two_round_robin_replicas(
    replicas: TwoReplicas, double: NextcloudDouble
) -> None:
    files = double.user_files("admin")
    for n in range(6):
        (files / f"old-{n}.txt").write_bytes(b"x")
    human = Human()
    async with Client(replicas.mcp, mode="2026-07-28", elicitation_callback=human.answer) as client:
        listed = [structured(await client.call_tool(*LIST))["total"] for _ in range(30)]
        for n in range(6):  # two requests each: the question, then the answer on the other replica
            structured(await client.call_tool("nc_webdav_delete_resource", {"path": f"old-{n}.txt"}))
    assert len(listed) == 30
    assert len(human.questions) == 6
    assert not [f for f in files.iterdir() if f.name.startswith("old-")]


async def test_a_replica_killed_mid_run_costs_at_most_the_calls_in_flight(replicas: TwoReplicas) -> None:
    calls = KeptCalls()  # a 2026-07-28 client has no session to lose: it connects again
    workers = 4
    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(calls.keep_calling(lambda: Client(replicas.mcp, mode="2026-07-28"), LIST))
        with anyio.fail_after(120):
            await calls.answered_at_least(40)
            replicas.processes["a"].send_signal(signal.SIGKILL)
            replicas.processes["a"].wait(10)
            await calls.answered_at_least(calls.answered + 40)  # the survivor answers everything
        calls.stop.set()
    assert calls.failed <= workers, calls.errors  # at most one call in flight per worker was lost
