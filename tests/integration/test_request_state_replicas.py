"""A multi-round call of the 2026-07-28 protocol continued on another replica (issue 39): the
`requestState` of an approval is sealed with a key every replica derives from the configured
secrets, so the answer may reach any of them; moved to another user, tool or arguments, or to a
deployment with other keys, it is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult, InputRequiredResult, InputResponses
from pydantic import SecretStr

from nextcloud_mcp_server.auth.request_state import request_state_security
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.records import Grant
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.conftest import ALICE_APP_PASSWORD
from tests.mcp_clients import running_app, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import KEY, OfflineServer, offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration

APPROVE: InputResponses = {"approval": ElicitResult(action="accept", content={"approve": True, "reason": ""})}


async def _asked(base: str, path: str) -> InputRequiredResult:
    """The first round of a delete on the server at `base`: the question and its sealed state."""
    async with Client(f"{base}/mcp", mode="2026-07-28") as client:
        first = await client.session.call_tool(
            "nc_webdav_delete_resource", {"path": path}, allow_input_required=True
        )
    assert isinstance(first, InputRequiredResult), first
    assert first.request_state
    return first


async def test_an_approval_asked_on_one_replica_is_answered_on_the_other(
    settings: Settings, double: NextcloudDouble
) -> None:
    (double.user_files("admin") / "old.txt").write_bytes(b"bye")
    shared = settings.model_copy(update={"token_encryption_key": SecretStr(generate_key())})
    with ExitStack() as stack:
        a = stack.enter_context(running_app(shared.model_copy(update={"replica_id": "a"})))
        b = stack.enter_context(running_app(shared.model_copy(update={"replica_id": "b"})))
        asked = await _asked(a, "old.txt")
        done = await _answer(b, "old.txt", asked)
    structured(done)
    assert not (double.user_files("admin") / "old.txt").exists()


async def test_a_state_sealed_under_the_old_key_opens_after_rotation_and_not_elsewhere(
    settings: Settings, double: NextcloudDouble
) -> None:
    """Keys rotate as the store's do (the new one first, the old one after it): a question asked
    before the rotation is answered after it. A deployment with other keys refuses the state."""
    (double.user_files("admin") / "a.txt").write_bytes(b"a")
    old, new, foreign = generate_key(), generate_key(), generate_key()
    before = settings.model_copy(update={"token_encryption_key": SecretStr(old)})
    after = settings.model_copy(update={"token_encryption_key": SecretStr(f"{new},{old}")})
    elsewhere = settings.model_copy(update={"token_encryption_key": SecretStr(foreign)})
    with ExitStack() as stack:
        asked = await _asked(stack.enter_context(running_app(before)), "a.txt")
        await _answer(stack.enter_context(running_app(elsewhere)), "a.txt", asked, refused=True)
        assert (double.user_files("admin") / "a.txt").exists()
        structured(await _answer(stack.enter_context(running_app(after)), "a.txt", asked))
    assert not (double.user_files("admin") / "a.txt").exists()


async def test_a_state_moved_to_other_arguments_or_another_user_is_refused(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """The state is bound to the call (tool and arguments) and to the caller: alice's approval
    of deleting her file neither deletes another file nor lets admin's token use it."""
    files = double.user_files("alice")
    (files / "mine.txt").write_bytes(b"1")
    (files / "other.txt").write_bytes(b"2")
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        grant = Grant("alice", "alice", "login-flow-v2", "app_password", ALICE_APP_PASSWORD)
        await _save(server, grant)
        alice, admin = server.headers("alice"), server.headers("admin")
        async with _client(server.mcp, alice) as client:
            asked = await client.session.call_tool(
                "nc_webdav_delete_resource", {"path": "mine.txt"}, allow_input_required=True
            )
            assert isinstance(asked, InputRequiredResult)
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await client.session.call_tool(
                    "nc_webdav_delete_resource",
                    {"path": "other.txt"},
                    input_responses=APPROVE,
                    request_state=asked.request_state,
                )
        async with _client(server.mcp, admin) as client:
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await client.session.call_tool(
                    "nc_webdav_delete_resource",
                    {"path": "mine.txt"},
                    input_responses=APPROVE,
                    request_state=asked.request_state,
                )
    assert (files / "mine.txt").exists()
    assert (files / "other.txt").exists()


async def _answer(base: str, path: str, asked: InputRequiredResult, *, refused: bool = False) -> Any:
    """The second round on the server at `base` (`refused`: it must refuse the state)."""
    async with Client(f"{base}/mcp", mode="2026-07-28") as client:
        second = client.session.call_tool(
            "nc_webdav_delete_resource",
            {"path": path},
            input_responses=APPROVE,
            request_state=asked.request_state,
        )
        if not refused:
            return await second
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await second
        return None


@asynccontextmanager
async def _client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The official SDK client pinned to 2026-07-28, with a bearer token."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,
    ):
        yield client


async def _save(server: OfflineServer, grant: Grant) -> None:
    store = SQLiteStore(server.settings.store_path, Cipher([KEY]))
    await store.open()
    try:
        await store.save_grant(grant)
    finally:
        await store.close()


def test_without_a_public_url_the_audience_is_the_projects_name() -> None:
    settings = load_settings(
        env_file=None, nextcloud_host="http://127.0.0.1:9", token_encryption_key=generate_key()
    )
    security = request_state_security(settings)
    assert security is not None
    assert security.audience == "nextcloud-mcp-bridge"
