"""Resources behind the same scopes and the same consent as the read tools: an OAuth token
without the scope is refused before anything reaches Nextcloud (403 step-up, as for a tool) and
sees neither the template nor the listing; in offline-access mode an unconnected user may list,
but a read asks for consent exactly as a tool call does (-32042, an input-required result on
2026-07-28, or the link in the error for a client without elicitation)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError, UrlElicitationRequiredError
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestURLParams, ElicitResult, TextResourceContents

from tests.mcp_clients import INITIALIZE, http_session
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import OAuthServer, oauth_server
from tests.offline import CONSENT_META, Completions, OfflineServer, browse, offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration


@pytest.fixture
def server(double: NextcloudDouble, double_url: str, idp: IdP) -> Iterator[OAuthServer]:
    with oauth_server(double, double_url, idp) as running:
        yield running


@pytest.fixture
def offline(double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path) -> Iterator[OfflineServer]:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as running:
        yield running


def _read(uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri}}


async def test_a_token_without_the_scope_is_refused_and_sees_only_what_it_may_read(
    server: OAuthServer, idp: IdP, double: NextcloudDouble
) -> None:
    """calendar:read only: reading a file is 403 with the step-up challenge, before Nextcloud is
    asked; the templates and the listing show the calendar alone, and a calendar day reads."""
    (double.user_files("admin") / "secret.txt").write_text("files:read only")
    token = idp.access_token(user="admin", resource=server.mcp, scope="calendar:read")
    opened = server.post(token, INITIALIZE)
    session_id = opened.headers["mcp-session-id"]
    refused = server.post(token, _read("nextcloud://files/secret.txt"), session_id)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="calendar:read files:read"' in challenge
    assert "files:read only" not in refused.text
    assert not [r for r in double.requests if "secret.txt" in r.path]  # Nextcloud never asked
    headers = {"Authorization": f"Bearer {token}"}
    async with http_session(server.mcp, headers=headers) as session:
        templates = (await session.list_resource_templates()).resource_templates
        listed = (await session.list_resources()).resources
        read = await session.read_resource("nextcloud://calendar/2026-11-26")
    assert [t.uri_template for t in templates] == [
        "nextcloud://calendar/{date}",
        "nextcloud://calendars/{calendar}/{date}",
    ]
    ours = [str(r.uri) for r in listed if str(r.uri).startswith("nextcloud://")]
    assert [uri.split("/")[2] for uri in ours] == ["calendar", "calendar"]  # no notes
    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert '"events":[]' in contents.text


async def _decline(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def test_an_unconnected_user_lists_freely_and_a_read_asks_for_consent(
    offline: OfflineServer, double: NextcloudDouble
) -> None:
    """Listing asks nothing (clients list on their own); the read answers -32042 with the consent
    link, the person connects, the session is told, and the same read then works."""
    (double.user_files("alice") / "hello.txt").write_text("after consent")
    completions = Completions()
    async with http_session(
        offline.mcp,
        headers=offline.headers("alice"),
        elicitation_callback=_decline,
        message_handler=completions.handler,
    ) as session:
        listed = (await session.list_resources()).resources
        assert offline.store_rows("SELECT COUNT(*) FROM elicitations") == [(0,)]
        with pytest.raises(MCPError) as raised:
            await session.read_resource("nextcloud://files/hello.txt")
        assert raised.value.code == -32042
        [request] = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
        done = completions.event(request.elicitation_id)
        page = await asyncio.to_thread(browse, request.url)
        assert "Connected" in page.text
        with anyio.fail_after(10):
            await done.wait()
        read = await session.read_resource("nextcloud://files/hello.txt")
    ours = [str(r.uri) for r in listed if str(r.uri).startswith("nextcloud://")]
    assert [uri.split("/")[2] for uri in ours] == ["calendar", "calendar"]
    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == "after consent"
    assert offline.grants() == ["alice"]


async def test_a_client_without_elicitation_gets_the_link_in_the_error(offline: OfflineServer) -> None:
    async with http_session(offline.mcp, headers=offline.headers("alice")) as session:
        with pytest.raises(MCPError) as raised:
            await session.read_resource("nextcloud://notes/1")
    consent = (raised.value.error.data or {})[CONSENT_META]
    assert raised.value.code == -32600
    assert consent["url"].startswith(f"{offline.base}/oauth/authorize-nextcloud?elicitation=")
    assert consent["url"] in raised.value.error.message
    assert offline.grants() == []


async def test_a_2026_client_reads_after_an_input_required_consent(
    offline: OfflineServer, double: NextcloudDouble
) -> None:
    (double.user_files("alice") / "modern.txt").write_text("2026")
    seen: list[str] = []

    async def open_link(context: ClientRequestContext, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        seen.append(params.url)
        assert "Connected" in (await asyncio.to_thread(browse, params.url)).text
        return ElicitResult(action="accept")

    async with (
        httpx2.AsyncClient(headers=offline.headers("alice"), timeout=30) as http,
        Client(
            streamable_http_client(offline.mcp, http_client=http), elicitation_callback=open_link
        ) as client,
    ):
        assert client.session.protocol_version >= "2026-07-28"
        read = await client.read_resource("nextcloud://files/modern.txt")
    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == "2026"
    assert len(seen) == 1
