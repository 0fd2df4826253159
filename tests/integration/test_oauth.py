"""The server as an OAuth resource server, with a real OpenID provider (npm oidc-provider), the
Nextcloud double accepting the same tokens, and real MCP clients (including the SDK's own OAuth
client provider)."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.auth.scopes import ALL_SCOPES
from nextcloud_mcp_server.config import ConfigError, load_settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from tests.mcp_clients import INITIALIZE, MCP_HEADERS, http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import (  # noqa: F401 - the fixture
    ON_DEMAND,
    OAuthServer,
    claims,
    default_tools,
    oauth_server,
    server_fixture,
)
from tests.oidc import IdP, follow_to_redirect

pytestmark = pytest.mark.integration


def test_protected_resource_metadata_at_both_paths(server: OAuthServer, idp: IdP) -> None:
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        document = httpx.get(server.base + path).json()
        scopes = document.pop("scopes_supported")
        assert document == {
            "resource": server.mcp,
            "authorization_servers": [idp.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Nextcloud",
        }
        # the default toolsets' scopes first, then those of the toolsets a person may enable
        assert scopes[:11] == [
            "notes:read",
            "notes:write",
            "calendar:read",
            "calendar:write",
            "files:read",
            "files:write",
            "contacts:read",
            "contacts:write",
            "sharing:read",
            "sharing:write",
            "search:read",
        ]
        assert {"deck:read", "deck:write", "cookbook:read", "mail:write"} <= set(scopes[11:])
        assert len(scopes) == len(set(scopes))


async def test_tools_list_shows_only_what_the_scopes_allow(server: OAuthServer, idp: IdP) -> None:
    token = idp.access_token(user="admin", resource=server.mcp, scope="notes:read calendar:read")
    async with http_session(server.mcp, headers={"Authorization": f"Bearer {token}"}) as session:
        names = {t.name for t in (await session.list_tools()).tools}
    expected = {t.name for t in default_tools() if set(t.scopes) <= {"notes:read", "calendar:read"}}
    assert names == expected | ON_DEMAND
    assert "nc_notes_get_note" in names
    assert "nc_notes_create_note" not in names


async def test_a_token_with_every_read_scope_sees_no_writing_tool(server: OAuthServer, idp: IdP) -> None:
    """Read scopes of every toolset (contacts, sharing and search included): the listing holds
    exactly the read-only tools, so no share, contact or file can be created or removed."""
    default = [t for t in all_tools() if t.toolset in DEFAULT_TOOLSETS]  # what this server offers
    reads = " ".join(s for s in ALL_SCOPES if s.endswith(":read") and any(s in t.scopes for t in default))
    token = idp.access_token(user="admin", resource=server.mcp, scope=reads)
    async with http_session(server.mcp, headers={"Authorization": f"Bearer {token}"}) as session:
        names = {t.name for t in (await session.list_tools()).tools}
    assert names - ON_DEMAND == {t.name for t in default_tools() if t.read_only}
    assert {"nc_share_list", "nc_search"} <= names
    assert not names & {"nc_share_create", "nc_share_update", "nc_share_delete"}
    assert "nc_contacts_search" in names
    assert not {
        n for n in names if n.startswith("nc_contacts_") and n.split("_")[2] in ("create", "update", "delete")
    }


def _session(server: OAuthServer, token: str) -> str:
    opened = server.post(token, INITIALIZE)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    server.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)
    return session_id


def test_a_request_nested_past_json_s_recursion_gets_the_sdk_s_parse_error(
    server: OAuthServer, idp: IdP
) -> None:
    """The scope check reads a caller's request before the SDK: 10 KB of brackets made it raise
    RecursionError, a 500. It now leaves the body to the SDK, which refuses it as JSON-RPC."""
    token = idp.access_token(user="admin", resource=server.mcp, scope="notes:read")
    session_id = _session(server, token)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id}
    response = httpx.post(server.mcp, content=b"[" * 5000 + b"]" * 5000, headers=headers, timeout=10)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32700  # parse error


def test_a_call_beyond_the_scopes_gets_403_step_up(
    server: OAuthServer, idp: IdP, double: NextcloudDouble
) -> None:
    """notes:read only, then a write: 403 insufficient_scope with scope = held + needed; nothing
    reached Nextcloud."""
    token = idp.access_token(user="admin", resource=server.mcp, scope="notes:read")
    session_id = _session(server, token)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "nc_notes_create_note", "arguments": {"title": "x"}},
    }
    response = server.post(token, call, session_id)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="notes:read notes:write"' in challenge
    assert f'resource_metadata="{server.metadata_url}"' in challenge
    assert not [r for r in double.requests if r.method == "POST"]
    allowed = server.post(
        token,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "nc_notes_search_notes", "arguments": {"query": "x"}},
        },
        session_id,
    )
    assert allowed.status_code == 200  # the gate lets a notes:read tool through


def test_re_authorizing_in_the_same_session_takes_effect_at_once(server: OAuthServer, idp: IdP) -> None:
    """After a step-up the client sends its new token on the same session: tools/list and
    tools/call see the new scopes (the caller is read per request, not per session)."""
    client_id = idp.register("http://127.0.0.1:1/callback")
    narrow = idp.token(user="admin", resource=server.mcp, scope="notes:read", client_id=client_id)
    wide = idp.token(user="admin", resource=server.mcp, scope="notes:read notes:write", client_id=client_id)
    session_id = _session(server, narrow["access_token"])
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    before = server.post(narrow["access_token"], listing, session_id)
    after = server.post(wide["access_token"], listing, session_id)
    assert "nc_notes_create_note" not in before.text
    assert "nc_notes_create_note" in after.text


def test_dotted_scopes_are_the_same_scopes_and_can_be_advertised(
    double: NextcloudDouble, double_url: str, idp: IdP
) -> None:
    """An IdP that spells scopes notes.read: such a token is honoured, and with the dot style the
    metadata and the step-up challenge use dots too."""
    with oauth_server(double, double_url, idp, oauth_scope_style="dot") as server:
        token = idp.sign(claims(server, idp, scope="notes.read"))
        document = httpx.get(server.metadata_url).json()
        session_id = _session(server, token)
        listed = server.post(
            token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}, session_id
        )
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "nc_notes_delete_note", "arguments": {"note_id": 1}},
        }
        refused = server.post(token, call, session_id)
    assert document["scopes_supported"][:2] == ["notes.read", "notes.write"]
    assert "nc_notes_get_note" in listed.text
    assert "nc_notes_delete_note" not in listed.text
    assert refused.status_code == 403
    assert 'scope="notes.read notes.write"' in refused.headers["www-authenticate"]


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


async def test_the_sdk_oauth_client_discovers_registers_authorizes_and_calls(server: OAuthServer) -> None:
    """From a bare 401: RFC 9728 metadata, AS discovery, dynamic registration, code + PKCE with
    resource, then a successful tools/call - all by the SDK's OAuthClientProvider."""
    redirect_uri = "http://127.0.0.1:9/sdk-callback"
    seen: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:
        seen["authorize"] = url

    async def callback_handler() -> AuthorizationCodeResult:
        landed = await asyncio.to_thread(follow_to_redirect, seen["authorize"], redirect_uri)
        params = parse_qs(urlsplit(landed).query)
        return AuthorizationCodeResult(code=params["code"][0], state=params["state"][0], iss=params["iss"][0])

    provider = OAuthClientProvider(
        server_url=server.mcp,
        client_metadata=OAuthClientMetadata(
            client_name="sdk test client",
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        streamable_http_client(server.mcp, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
    assert listed["total"] == 0
    assert "resource=" in seen["authorize"]
    assert parse_qs(urlsplit(seen["authorize"]).query)["resource"] == [server.mcp]


def test_a_session_is_bound_to_the_subject_that_opened_it(server: OAuthServer, idp: IdP) -> None:
    alice = idp.access_token(user="alice", resource=server.mcp)
    admin = idp.access_token(user="admin", resource=server.mcp)
    session_id = _session(server, alice)
    hijack = server.post(admin, {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}, session_id)
    own = server.post(alice, {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}}, session_id)
    assert hijack.status_code == 404
    assert own.status_code == 200


async def test_two_users_at_once_each_see_only_their_own_files(
    server: OAuthServer, idp: IdP, double: NextcloudDouble
) -> None:
    """Alice and admin work at the same time; each request reaches Nextcloud with its own user's
    token (and no cookie: the double sets session cookies as Nextcloud does), and each sees only
    their own files."""
    before = len(double.requests)
    tokens = {user: idp.access_token(user=user, resource=server.mcp) for user in ("alice", "admin")}

    async def work(user: str) -> list[str]:
        async with http_session(server.mcp, headers={"Authorization": f"Bearer {tokens[user]}"}) as session:
            await asyncio.gather(
                *(
                    session.call_tool("nc_webdav_write_file", {"path": f"{user}-{i}.txt", "content": user})
                    for i in range(5)
                )
            )
            listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        return sorted(e["name"] for e in listed["entries"])

    alice, admin = await asyncio.gather(work("alice"), work("admin"))
    assert alice == [f"alice-{i}.txt" for i in range(5)]
    assert admin == [f"admin-{i}.txt" for i in range(5)]
    # (the server's own check at start asks /status.php without a user: not a call of theirs)
    ours = [record for record in list(double.requests)[before:] if record.path != "/status.php"]
    assert {record.user for record in ours} == {"alice", "admin"}
    assert not [record for record in ours if record.cookie]
    for record in ours:
        if record.path.startswith("/remote.php/dav/files/"):
            assert record.path.startswith(f"/remote.php/dav/files/{record.user}/")


def test_foreign_host_and_origin_are_refused(server: OAuthServer) -> None:
    evil_host = httpx.get(f"{server.base}/health", headers={"Host": "evil.example"})
    evil_origin = httpx.get(f"{server.base}/health", headers={"Origin": "https://evil.example"})
    fine = httpx.get(f"{server.base}/health")
    assert evil_host.status_code == 421
    assert evil_origin.status_code == 403
    assert fine.status_code == 200


def test_a_public_url_on_a_host_that_is_not_allowed_stops_the_start(double_url: str, idp: IdP) -> None:
    settings = load_settings(
        env_file=None,
        nextcloud_host=double_url,
        oidc_issuer=idp.issuer,
        mcp_public_url="https://mcp.example.com/mcp",
    )
    with pytest.raises(ConfigError, match="MCP_ALLOWED_HOSTS must include mcp.example.com"):
        create_app(settings)
    allowed = settings.model_copy(update={"mcp_allowed_hosts": "mcp.example.com"})
    assert create_app(allowed) is not None
