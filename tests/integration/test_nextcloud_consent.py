"""Nextcloud itself as the consent provider: its OAuth2 app and Login Flow v2, end to end.

The IdP (npm oidc-provider) only authenticates MCP clients to this server here: the double does
not accept its tokens, so every call that reaches Nextcloud proves the credential came from
Nextcloud. The person is played by httpx following the consent link to the double's sign-in page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import MCPError, UrlElicitationRequiredError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from nextcloud_mcp_server.storage.crypto import Cipher
from nextcloud_mcp_server.storage.store import SQLiteStore
from tests.conftest import ADMIN_PASSWORD, ALICE_APP_PASSWORD
from tests.mcp_clients import http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.offline import KEY, Completions, OfflineServer, offline_server, sign_in_at_nextcloud
from tests.oidc import IdP

pytestmark = pytest.mark.integration

ALICE_PASSWORD = "alice-login-password"
PROVIDERS = ["nextcloud-oauth2", "login-flow-v2"]


@pytest.fixture(params=PROVIDERS)
def server(
    request: pytest.FixtureRequest, double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> Iterator[OfflineServer]:
    store = tmp_path / "store.sqlite3"
    with offline_server(double, double_url, idp, store, nextcloud_consent_provider=request.param) as running:
        yield running


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def _consent_url(session: Any, tool: str = "nc_notes_list_notes") -> tuple[str, str, str]:
    """Call a tool without a grant: (consent URL, elicitation id, message) of the -32042 error."""
    with pytest.raises(MCPError) as raised:
        await session.call_tool(tool, {})
    assert raised.value.code == -32042
    [request] = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
    return request.url, request.elicitation_id, request.message


async def _connect(
    server: OfflineServer, session: Any, completions: Completions, user: str, password: str
) -> Any:
    """Follow the consent link, sign in at Nextcloud, wait for notifications/elicitation/complete."""
    url, elicitation_id, _ = await _consent_url(session)
    assert url.startswith(f"{server.base}/oauth/authorize-nextcloud?elicitation=")
    page = await asyncio.to_thread(sign_in_at_nextcloud, url, user, password)
    with anyio.fail_after(15):
        await completions.event(elicitation_id).wait()
    return page


async def _grant_secret(server: OfflineServer) -> tuple[str, str, str, int]:
    store = SQLiteStore(server.settings.store_path, Cipher([KEY]))
    await store.open()
    try:
        grant = await store.get_grant("alice")
    finally:
        await store.close()
    assert grant is not None
    return grant.provider, grant.kind, grant.secret, grant.version


def _audit(server: OfflineServer) -> list[str]:
    return [r[0] for r in server.store_rows("SELECT event FROM audit WHERE subject = 'alice' ORDER BY id")]


async def test_a_url_capable_client_reaches_its_notes_through_nextcloud_consent(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    """-32042 -> Nextcloud's sign-in page -> completion notification -> the retried notes call
    succeeds, as alice, with a credential Nextcloud issued (no IdP token reaches Nextcloud)."""
    provider = server.settings.nextcloud_consent_provider
    (double.user_files("alice") / "Notes").mkdir(parents=True, exist_ok=True)
    (double.user_files("alice") / "Notes" / "Plans.md").write_text("ship it")
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        page = await _connect(server, session, completions, "alice", ALICE_PASSWORD)
        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
        made = structured(await session.call_tool("nc_notes_create_note", {"title": "New", "content": "hi"}))
        files = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Notes"}))
        status = structured(await session.call_tool("nc_auth_status", {}))
    assert page.status_code == 200
    assert (
        "Your Nextcloud is connected" if provider == "nextcloud-oauth2" else "Account connected"
    ) in page.text
    assert [n["title"] for n in notes["notes"]] == ["Plans"]
    assert (double.user_files("alice") / "Notes" / "New.md").read_text() == "hi"
    assert made["title"] == "New"
    assert files["total"] == 2
    assert (status["connected"], status["provider"], status["nextcloud_user"]) == (True, provider, "alice")
    got = await _grant_secret(server)
    assert got[:2] == (provider, "refresh_token" if provider == "nextcloud-oauth2" else "app_password")
    reached = [r for r in double.requests if r.path.startswith(("/index.php/apps/notes", "/remote.php/dav"))]
    assert reached
    assert {r.user for r in reached} == {"alice"}
    notes_calls = {r.scheme for r in reached if r.path.startswith("/index.php/apps/notes")}
    assert notes_calls == {"basic"}  # the Notes API refuses Bearer; it never got one
    assert _audit(server)[:2] == ["consent_requested", "granted"]


async def test_a_consent_from_another_nextcloud_user_is_refused(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    """alice's assistant, but the person signs in to Nextcloud as admin: nothing is stored, the
    credential Nextcloud just issued is deleted again, and alice is asked again - told why."""
    provider = server.settings.nextcloud_consent_provider
    admin_passwords = set(double.accounts["admin"].app_passwords)
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        url, elicitation_id, _ = await _consent_url(session)
        page = await asyncio.to_thread(sign_in_at_nextcloud, url, "admin", ADMIN_PASSWORD)
        if provider == "login-flow-v2":  # the last page is Nextcloud's; the session hears of it
            with anyio.fail_after(15):
                await completions.event(elicitation_id).wait()
        _, _, message = await _consent_url(session)
    if provider == "nextcloud-oauth2":
        assert page.status_code == 403
        assert "Signed in as someone else" in page.text
        assert "as admin, but your assistant acts for alice" in page.text
    else:
        assert "The last attempt failed: consent came from Nextcloud user admin, expected alice" in message
    assert server.grants() == []
    assert double.login.deleted == ["admin"]
    assert double.accounts["admin"].app_passwords == admin_passwords
    assert double.login.oauth_grants("admin") == 0
    assert "failed" in _audit(server)


async def test_disconnecting_revokes_the_credential_at_nextcloud(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        await _connect(server, session, completions, "alice", ALICE_PASSWORD)
        structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        _, _, secret, _ = await _grant_secret(server)
        revoked = structured(await session.call_tool("revoke_nextcloud_access", {}))
        again, _, _ = await _consent_url(session, "nc_webdav_list_directory")
    assert revoked == {"revoked": True, "at_provider": True}
    assert again
    assert server.grants() == []
    assert double.login.deleted == ["alice"]
    assert double.accounts["alice"].app_passwords == {ALICE_APP_PASSWORD}
    assert double.login.oauth_grants("alice") == 0
    # What was stored no longer opens anything at Nextcloud.
    if server.settings.nextcloud_consent_provider == "login-flow-v2":
        answer = httpx.get(
            f"{server.settings.nextcloud_host}/ocs/v2.php/cloud/user",
            auth=("alice", secret),
            headers={"OCS-APIRequest": "true"},
        )
        assert answer.status_code == 401


async def test_a_credential_revoked_in_nextcloud_leads_to_a_fresh_consent(
    server: OfflineServer, double: NextcloudDouble
) -> None:
    """The person removes the app in Nextcloud's security settings: the next call meets 401, the
    grant is dropped, and the same call asks for consent again instead of failing forever."""
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        await _connect(server, session, completions, "alice", ALICE_PASSWORD)
        structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        double.login.revoke_all("alice")
        url, _, _ = await _consent_url(session, "nc_webdav_list_directory")
        assert server.grants() == []
        await asyncio.to_thread(sign_in_at_nextcloud, url, "alice", ALICE_PASSWORD)
        with anyio.fail_after(15):  # no notification needed: poll the grant with a deadline
            while server.grants() != ["alice"]:
                await anyio.sleep(0.05)
        listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
    assert listed["total"] >= 0
    events = _audit(server)
    assert events.count("granted") == 2
    assert "failed" in events


async def test_nextcloud_oauth2_tokens_rotate_on_refresh(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """Access tokens of a second's life: each call after expiry refreshes; Nextcloud rotates the
    refresh token every time, the stored one follows, and a used one no longer works."""
    double.login.access_ttl = 1.0
    store = tmp_path / "store.sqlite3"
    completions = Completions()
    with offline_server(
        double, double_url, idp, store, nextcloud_consent_provider="nextcloud-oauth2"
    ) as server:
        async with http_session(
            server.mcp,
            headers=server.headers("alice"),
            elicitation_callback=_no_form,
            message_handler=completions.handler,
        ) as session:
            await _connect(server, session, completions, "alice", ALICE_PASSWORD)
            structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
            _, _, first, version = await _grant_secret(server)
            with anyio.fail_after(15):
                while _audit(server).count("refreshed") < 2:
                    structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
            _, _, second, later = await _grant_secret(server)
        client_id = server.settings.nextcloud_oauth2_client_id or ""
        secret = server.settings.nextcloud_oauth2_client_secret
        reuse = httpx.post(
            f"{double_url}/index.php/apps/oauth2/api/v1/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": first,
                "client_id": client_id,
                "client_secret": secret.get_secret_value() if secret else "",
            },
        )
    assert second != first
    assert later > version
    assert (reuse.status_code, reuse.json()) == (400, {"error": "invalid_request"})
