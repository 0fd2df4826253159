"""The SDK's own OAuth client against this server as authorization server, without a browser:
discovery from the 401, dynamic registration (and, separately, a client ID metadata document),
PKCE, the person's sign-in and approval (straight through `runtime.authorization_requests`),
then tool calls as that Nextcloud user - on the double and on the real Nextcloud - and a refresh."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.oauth2 import AuthorizationCodeResult
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from nextcloud_mcp_server.storage.records import Grant
from tests.authz.documents import document_host
from tests.authz_server import AuthzServer, authz_server
from tests.backends import Nextcloud
from tests.mcp_clients import structured
from tests.postgres import PostgresCluster

REDIRECT = "http://127.0.0.1:9/sdk-callback"


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def sdk_client(
    server: AuthzServer, user: str, seen: dict[str, str], redirect: str = REDIRECT, **extra: Any
) -> OAuthClientProvider:
    async def redirect_handler(url: str) -> None:
        seen["authorize"] = url

    async def callback_handler() -> AuthorizationCodeResult:
        def person() -> str:
            with httpx.Client(follow_redirects=False, timeout=15) as browser:
                answer = browser.get(seen["authorize"])
            assert answer.status_code == 302, answer.text
            seen["signin"] = answer.headers["location"]
            return server.approve(seen["signin"], user)

        landed = await asyncio.to_thread(person)
        params = parse_qs(urlsplit(landed).query)
        return AuthorizationCodeResult(code=params["code"][0], state=params["state"][0], iss=params["iss"][0])

    return OAuthClientProvider(
        server_url=server.mcp,
        client_metadata=OAuthClientMetadata(
            client_name="sdk test client",
            redirect_uris=[redirect],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        **extra,
    )


@pytest.fixture
def server(nextcloud: Nextcloud, tmp_path: Path) -> Iterator[AuthzServer]:
    with authz_server(nextcloud.url, tmp_path / "store.sqlite3") as running:
        save_grant(running, nextcloud)
        yield running


async def test_dcr_pkce_and_a_tool_call_as_the_signed_in_user(
    server: AuthzServer, nextcloud: Nextcloud
) -> None:
    await dcr_flow(server, nextcloud)


async def test_the_same_on_the_postgresql_store(
    nextcloud: Nextcloud, tmp_path: Path, postgres: PostgresCluster
) -> None:
    """Several replicas keep everything in PostgreSQL: the authorization server's tables too."""
    with (
        postgres.database() as url,
        authz_server(nextcloud.url, tmp_path / "unused.sqlite3", store_url=url) as server,
    ):
        save_grant(server, nextcloud)
        await dcr_flow(server, nextcloud)
        # single use holds on PostgreSQL too: a reused refresh token revokes its family
        tokens = server.tokens_for()
        form = {"grant_type": "refresh_token", "client_id": tokens["client_id"]}
        rotated = server.token(**form, refresh_token=tokens["refresh_token"])
        assert rotated.status_code == 200
        assert server.token(**form, refresh_token=tokens["refresh_token"]).status_code == 400
        assert server.token(**form, refresh_token=rotated.json()["refresh_token"]).status_code == 400
    assert not (tmp_path / "unused.sqlite3").exists()


def save_grant(server: AuthzServer, nextcloud: Nextcloud) -> None:
    alice = nextcloud.alice
    grant = Grant("alice", "alice", "login-flow-v2", "app_password", alice.app_password, login=alice.user)
    server.run(server.runtime.store.save_grant(grant))  # type: ignore[union-attr]


async def dcr_flow(server: AuthzServer, nextcloud: Nextcloud) -> None:
    nextcloud.add_note(nextcloud.alice, title="Quarterly plan", content="budget for the boat")
    seen: dict[str, str] = {}
    provider = sdk_client(server, "alice", seen)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        streamable_http_client(server.mcp, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        found = structured(await session.call_tool("nc_notes_search_notes", {"query": "boat"}))
        assert [hit["title"] for hit in found["hits"]] == ["Quarterly plan"]
        # the access token expires: the SDK refreshes with the rotated refresh token
        storage = provider.context.storage
        tokens = await storage.get_tokens()
        assert tokens is not None
        assert tokens.refresh_token is not None
        first_refresh = tokens.refresh_token
        provider.context.token_expiry_time = 1.0  # as if the access token had expired
        again = structured(await session.call_tool("nc_notes_search_notes", {"query": "budget"}))
        assert [hit["title"] for hit in again["hits"]] == ["Quarterly plan"]
        renewed = await storage.get_tokens()
        assert renewed is not None
        assert renewed.refresh_token not in (None, first_refresh)
    query = parse_qs(urlsplit(seen["authorize"]).query)
    assert query["resource"] == [server.mcp]
    assert query["code_challenge_method"] == ["S256"]
    assert seen["signin"].startswith(f"{server.base}/oauth/signin?request=")


async def test_registration_by_client_id_metadata_document(double_url: str, tmp_path: Path) -> None:
    """The SDK uses the document URL as client_id when the metadata says CIMD is supported: no
    /register call, and the server fetched the document over TLS from a CA it was told to trust."""
    with (
        document_host(tmp_path) as documents,
        authz_server(
            double_url, tmp_path / "store.sqlite3", auth_server_cimd_ca_bundle=documents.ca_bundle
        ) as server,
    ):
        seen: dict[str, str] = {}
        client_id = documents.url("good.json")
        provider = sdk_client(server, "alice", seen, documents.redirect_uri, client_metadata_url=client_id)
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            streamable_http_client(server.mcp, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
        assert "nc_notes_search_notes" in {tool.name for tool in listed.tools}
        assert parse_qs(urlsplit(seen["authorize"]).query)["client_id"] == [client_id]
        assert documents.fetched == ["good.json"]  # fetched once, then cached (authorize and token)
        count = server.run(_count(server, "SELECT COUNT(*) FROM authz_clients"))
        assert count == 0  # nothing registered


async def _count(server: AuthzServer, query: str) -> int:
    store = server.runtime.store
    async with store.db.execute(query) as cursor:  # type: ignore[union-attr]
        row = await cursor.fetchone()
    return int(row[0])
