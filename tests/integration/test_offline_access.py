"""Offline access and progressive consent, end to end: a real IdP (npm oidc-provider), the
server over streamable HTTP, a real SQLite store, the Nextcloud double, and several real MCP
clients - URL-capable, form-only, without elicitation, on the 2026-07-28 protocol, and the
TypeScript SDK. The "browser" is httpx following redirects; the IdP's auto-login stands in for
the person at the sign-in page."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, ClientSession, MCPError, UrlElicitationRequiredError
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from nextcloud_mcp_server.storage.crypto import Cipher, generate_key
from nextcloud_mcp_server.storage.store import SQLiteStore, StoreError
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import (  # noqa: F401 - the fixture
    CONSENT_META,
    KEY,
    Completions,
    OfflineServer,
    browse,
    offline_server,
    provision,
    server_fixture,
    walk_to_callback,
)
from tests.oidc import IDP_DIR, NODE, IdP

pytestmark = pytest.mark.integration


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def test_a_url_capable_client_is_asked_once_and_retries_when_told(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    """-32042 with the consent URL; the browser signs in; the client receives
    notifications/elicitation/complete; the retried call reaches Nextcloud as that user."""
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("nc_webdav_write_file", {"path": "after-consent.txt", "content": "ok"})
        assert raised.value.code == -32042
        [request] = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
        assert request.url.startswith(f"{server.base}/oauth/authorize-nextcloud?elicitation=")
        done = completions.event(request.elicitation_id)
        page = await asyncio.to_thread(browse, request.url)
        assert page.status_code == 200
        assert "Connected" in page.text
        with anyio.fail_after(10):
            await done.wait()
        written = structured(
            await session.call_tool("nc_webdav_write_file", {"path": "after-consent.txt", "content": "ok"})
        )
    assert written["created"] is True
    assert (double.user_files("alice") / "after-consent.txt").read_text() == "ok"
    assert server.grants() == ["alice"]
    events = [
        row[0] for row in server.store_rows("SELECT event FROM audit WHERE subject = 'alice' ORDER BY id")
    ]
    assert events[:3] == ["consent_requested", "granted", "refreshed"]


async def test_stored_tokens_never_appear_in_the_database_file(server: OfflineServer) -> None:
    """After consent, the refresh token (decrypted here with the key) is nowhere in the SQLite
    file or its WAL, and neither is the access token minted from it."""
    await provision(server, "alice")
    store = SQLiteStore(server.settings.store_path, Cipher([KEY]))
    await store.open()
    grant = await store.get_grant("alice")
    await store.close()
    assert grant is not None
    assert grant.kind == "refresh_token"
    assert len(grant.secret) > 20
    raw = b"".join(p.read_bytes() for p in server.settings.store_path.parent.glob("store.sqlite3*"))
    assert grant.secret.encode() not in raw
    assert b"alice" in raw  # the file was really read


async def test_a_client_without_elicitation_gets_the_link_in_text_and_meta(server: OfflineServer) -> None:
    await provision(server, "alice")
    assert server.grants() == ["alice"]


class FormOnlySession(ClientSession):
    """A client that declares form elicitation only (the SDK has no public switch for it)."""

    def _build_capabilities(self, version: str) -> Any:
        from mcp.types import ElicitationCapability, FormElicitationCapability

        caps = super()._build_capabilities(version)
        if caps.elicitation is not None:
            caps.elicitation = ElicitationCapability(form=FormElicitationCapability())
        return caps


async def test_a_form_only_client_is_sent_to_check_logged_in(server: OfflineServer) -> None:
    """The tool says to run check_logged_in, which shows the link in a form; the person opens it,
    confirms, and check_logged_in verifies the grant exists."""
    forms: list[str] = []

    async def fill_form(context: ClientRequestContext, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        forms.append(params.message)
        link = params.message.split(": ", 1)[1].split()[0]
        page = await asyncio.to_thread(browse, link)
        assert "Connected" in page.text
        return ElicitResult(action="accept", content={"connected": True})

    async with (
        httpx2.AsyncClient(headers=server.headers("alice"), timeout=30) as http,
        streamable_http_client(server.mcp, http_client=http) as (read, write),
        FormOnlySession(read, write, elicitation_callback=fill_form) as session,
    ):
        await session.initialize()
        first = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        assert first.is_error
        assert "Run the check_logged_in tool" in first.content[0].text  # type: ignore[union-attr]
        checked = await session.call_tool("check_logged_in", {})
        assert "Connected" in checked.content[0].text  # type: ignore[union-attr]
        listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        status = structured(await session.call_tool("nc_auth_status", {}))
    assert len(forms) == 1
    assert listed["total"] == 0
    assert status["connected"] is True
    assert status["nextcloud_user"] == "alice"


async def test_a_2026_client_gets_an_input_required_url_and_retries(server: OfflineServer) -> None:
    """On protocol 2026-07-28 the URL request rides in an input-required result; the SDK's Client
    calls back, the person signs in, the Client retries on its own."""
    seen: list[str] = []

    async def open_link(context: ClientRequestContext, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        seen.append(params.url)
        page = await asyncio.to_thread(browse, params.url)
        assert "Connected" in page.text
        return ElicitResult(action="accept")

    async with (
        httpx2.AsyncClient(headers=server.headers("alice"), timeout=30) as http,
        Client(
            streamable_http_client(server.mcp, http_client=http), elicitation_callback=open_link
        ) as client,
    ):
        assert client.session.protocol_version >= "2026-07-28"
        result = await client.call_tool("nc_webdav_list_directory", {"path": "/"})
    assert not result.is_error, result.content
    assert len(seen) == 1
    assert server.grants() == ["alice"]


def test_the_typescript_sdk_client_follows_the_same_flow(server: OfflineServer) -> None:
    """A second, independent client (TypeScript SDK, elicitation.url): -32042, browser,
    elicitation/complete, retry - without the test doing anything but opening the link."""
    process = subprocess.Popen(
        [
            str(NODE),
            str(IDP_DIR / "mcp_client.mjs"),
            server.mcp,
            "nc_webdav_write_file",
            '{"path": "ts.txt", "content": "ts"}',
        ],
        cwd=IDP_DIR,
        env={"PATH": os.environ.get("PATH", ""), "BEARER_TOKEN": server.token("alice")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        url = first["elicitation"]["url"]
        assert "Connected" in browse(url).text
        events = [json.loads(line) for line in process.stdout]
        assert process.wait(30) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
    assert events[0] == {"completed": first["elicitation"]["elicitationId"]}
    assert events[1]["result"]["isError"] is False
    assert events[1]["result"]["structuredContent"]["path"] == "/ts.txt"


async def test_a_tampered_grant_is_refused_not_used(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """A grant whose ciphertext was altered at rest (found after a restart, when nothing is
    cached) is refused with a clear error, and left in place for the administrator; the shared
    access token minted from it, altered too, is not used either."""
    store = tmp_path / "store.sqlite3"
    with offline_server(double, double_url, idp, store) as first:
        await provision(first, "alice")
        async with http_session(first.mcp, headers=first.headers("alice")) as session:
            await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        [(sealed,)] = first.store_rows("SELECT secret FROM grants")
        [(token,)] = first.store_rows("SELECT credential FROM access_tokens")

    def flip(text: str) -> str:
        return text[:-5] + ("A" if text[-5] != "A" else "B") + text[-4:]

    flipped = flip(sealed)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE grants SET secret = ?", (flipped,))
        db.execute("UPDATE access_tokens SET credential = ?", (flip(token),))
    with offline_server(double, double_url, idp, store) as restarted:
        async with http_session(restarted.mcp, headers=restarted.headers("alice")) as session:
            result = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        assert restarted.store_rows("SELECT secret FROM grants") == [(flipped,)]  # nothing deleted
    assert result.is_error
    assert "cannot be read" in result.content[0].text  # type: ignore[union-attr]
    assert "integrity check" in result.content[0].text  # type: ignore[union-attr]


async def test_a_wrong_key_stops_the_start_and_destroys_nothing(
    server: OfflineServer, tmp_path: Path
) -> None:
    await provision(server, "alice")
    before = server.settings.store_path.read_bytes()
    other = SQLiteStore(server.settings.store_path, Cipher([generate_key()]))
    with pytest.raises(StoreError, match="encrypted with key"):
        await other.open()
    await other.close()
    assert server.settings.store_path.read_bytes() == before
    assert server.grants() == ["alice"]


async def test_a_revoked_grant_is_dropped_and_consent_asked_again(server: OfflineServer) -> None:
    """revoke_nextcloud_access revokes at the IdP (RFC 7009) and deletes the grant; the next call
    asks for consent again instead of failing."""
    await provision(server, "alice")
    async with http_session(server.mcp, headers=server.headers("alice")) as session:
        revoked = structured(await session.call_tool("revoke_nextcloud_access", {}))
        again = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
        status = structured(await session.call_tool("nc_auth_status", {}))
    assert revoked == {"revoked": True, "at_provider": True}
    assert again.is_error
    assert CONSENT_META in (again.meta or {})
    assert status == {
        "connected": False,
        "provider": None,
        "nextcloud_user": None,
        "scopes": [],
        "since": None,
        "refreshed": None,
        "problem": None,
    }
    assert server.grants() == []


async def test_account_tools_are_offered_only_with_offline_access(server: OfflineServer) -> None:
    async with http_session(server.mcp, headers=server.headers("alice")) as session:
        names = {t.name for t in (await session.list_tools()).tools}
    assert {"check_logged_in", "revoke_nextcloud_access", "nc_auth_status"} <= names
