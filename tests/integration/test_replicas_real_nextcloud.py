"""Two replicas with every real part (issue 39): the real Nextcloud 34 with its OAuth2 app as the
consent provider, a real PostgreSQL (restarted mid-run), the real IdP for the MCP clients, Debian's
nginx with the shipped configuration - round robin, no affinity, for 2026-07-28 clients - and the
official Python SDK client pinned to 2026-07-28.

A consent asked on replica A is continued on replica B, an approval too; a run through nginx
survives replica A killed (at most the calls in flight) and PostgreSQL restarted (no call lost);
Nextcloud is asked for one refresh of alice's token in all (one shared token for both replicas)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import ElicitResult, InputRequiredResult, InputResponses

from tests.backends import Nextcloud
from tests.kept_calls import KeptCalls
from tests.mcp_clients import structured
from tests.nextcloud_pages import NextcloudPages
from tests.oidc import IdP
from tests.postgres import PostgresCluster
from tests.postgres_restart import restartable_cluster, start, stop
from tests.replicas_real import Deployment, client_at, real_replicas, token_requests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

LIST = ("nc_webdav_list_directory", {"path": "/"})
APPROVE: InputResponses = {"approval": ElicitResult(action="accept", content={"approve": True, "reason": ""})}


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresCluster]:
    with restartable_cluster() as cluster:
        yield cluster


@pytest.fixture
def deployment(
    real_nextcloud_34: Nextcloud, idp: IdP, own_postgres: PostgresCluster, tmp_path: Path
) -> Iterator[Deployment]:
    with real_replicas(real_nextcloud_34, idp, own_postgres, tmp_path) as running:
        yield running


async def test_two_round_robin_replicas_on_the_real_nextcloud_lose_nothing(deployment: Deployment) -> None:
    d, nextcloud = deployment, deployment.nextcloud
    files = [f"old-{n}.txt" for n in range(4)]
    for name in files:
        nextcloud.put_file(nextcloud.alice, name, b"x")
    before = token_requests(nextcloud)

    # A consent asked on A, given in the browser through nginx, continued on B.
    async with client_at(d.replicas["a"], d.bearer) as client:
        asked = await client.session.call_tool(*LIST, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult), asked
    [consent] = asked.input_requests.values()
    url = consent.params.url  # type: ignore[union-attr]
    with NextcloudPages(nextcloud.url) as pages:
        page = await asyncio.to_thread(pages.follow, url, "alice", nextcloud.alice.password)
    assert "Your Nextcloud is connected" in page.text, pages.steps
    async with client_at(d.replicas["b"], d.bearer) as client:
        listed = await client.session.call_tool(
            *LIST,
            input_responses={key: ElicitResult(action="accept") for key in asked.input_requests},
            request_state=asked.request_state,
        )
    assert "total" in structured(listed)

    # An approval asked on B, answered on A.
    async with client_at(d.replicas["b"], d.bearer) as client:
        question = await client.session.call_tool(
            "nc_webdav_delete_resource", {"path": files[0]}, allow_input_required=True
        )
    assert isinstance(question, InputRequiredResult), question
    async with client_at(d.replicas["a"], d.bearer) as client:
        structured(
            await client.session.call_tool(
                "nc_webdav_delete_resource",
                {"path": files[0]},
                input_responses=APPROVE,
                request_state=question.request_state,
            )
        )

    # Round robin through nginx: approvals among the calls, replica A killed, PostgreSQL restarted.
    async def approve(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"approve": True, "reason": ""})

    calls = KeptCalls()
    workers = 4
    async with client_at(d.base, d.bearer, elicitation_callback=approve) as client:
        for name in files[1:]:
            structured(await client.call_tool("nc_webdav_delete_resource", {"path": name}))
    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(calls.keep_calling(lambda: client_at(d.base, d.bearer), LIST))
        with anyio.fail_after(240):
            await calls.answered_at_least(40)
            d.processes["a"].send_signal(signal.SIGKILL)
            d.processes["a"].wait(10)
            killed = (calls.answered, calls.failed)
            await calls.answered_at_least(killed[0] + 40)
            stop(d.postgres)
            start(d.postgres)
            restarted = (calls.answered, calls.failed)
            await calls.answered_at_least(restarted[0] + 40)
        calls.stop.set()
    assert killed[1] == 0, calls.errors  # nothing failed before the kill
    assert restarted[1] - killed[1] <= workers, calls.errors  # at most the calls in flight on A
    assert calls.failed == restarted[1], calls.errors  # the restart of PostgreSQL cost no call
    assert not [name for name in files if nextcloud.exists(nextcloud.alice, name)]
    # One token for both replicas: Nextcloud saw the code exchanged and one refresh, no more.
    assert token_requests(nextcloud) - before == 2
    assert d.rows("SELECT COUNT(*) FROM audit WHERE event = 'refreshed'") == [(1,)]
