"""Issue 17 end to end: a person with only a Nextcloud adds this server to an OAuth-capable MCP
client, signs in with their Nextcloud account, approves, and works with their notes.

The MCP client is the SDK's own `OAuthClientProvider` over streamable HTTP: it meets the 401,
discovers this server as authorization server, registers (DCR), and hands the authorization URL
to its redirect handler - here Playwright driving Debian's Chromium, which signs in at the REAL
Nextcloud (its OAuth2 app) and approves on our consent page. The client's loopback redirect URI
is a small listener that hands code and state to the client's callback handler. No second
browser trip: the Nextcloud credential from the sign-in becomes the offline grant.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jwt
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import AuthorizationCodeResult
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.authz import signin_flow
from nextcloud_mcp_server.config import load_settings
from tests.authz.documents import document_host
from tests.authz.test_sdk_client import MemoryStorage
from tests.authz_server import KEY, AuthzServer, LoopRuntime, Pkce, nextcloud_signin_server
from tests.backends import Nextcloud
from tests.browser import Browser, Person, Screenshots, Seen
from tests.mcp_clients import structured
from tests.nextcloud_double.server import serve_in_thread
from tests.postgres import PostgresCluster
from tests.processes import free_port

pytestmark = [pytest.mark.integration, pytest.mark.browser]


@dataclass
class Loopback:
    """The MCP client's redirect URI: a listener on a loopback port, as native clients have."""

    url: str
    landed: asyncio.Queue[dict[str, str]] = field(default_factory=asyncio.Queue)


@contextlib.asynccontextmanager
async def loopback() -> AsyncIterator[Loopback]:
    loop = asyncio.get_running_loop()
    port = free_port()
    box = Loopback(f"http://127.0.0.1:{port}/callback")

    async def callback(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        loop.call_soon_threadsafe(box.landed.put_nowait, params)
        return HTMLResponse("<!doctype html><title>Done</title><p>You can close this window.</p>")

    app = Starlette(routes=[Route("/callback", callback)])
    with serve_in_thread(app, port=port):
        yield box


@dataclass
class Story:
    """What the person saw, and what the client got."""

    pages: dict[str, Seen] = field(default_factory=dict)
    authorize_url: str = ""


async def _through_nextcloud(person: Person, url: str, password: str, story: Story) -> Seen:
    """The person opens the authorization URL, signs in at Nextcloud as alice and grants access
    there; the page they land on (ours)."""
    story.pages["connect"] = await person.open(url, "nextcloud connect to your account")
    assert "Connect to your account" in story.pages["connect"].text
    story.pages["login"] = await person.click("Log in", "nextcloud login form")
    story.pages["grant"] = await person.sign_in("alice", password, "nextcloud grant access")
    assert "Account access" in story.pages["grant"].text
    story.pages["consent"] = await person.click("Grant access", "our consent page")
    return story.pages["consent"]


def client_for(
    server: AuthzServer, person: Person, password: str, box: Loopback, story: Story, **extra: Any
) -> OAuthClientProvider:
    async def redirect_handler(url: str) -> None:
        story.authorize_url = url
        await _through_nextcloud(person, url, password, story)
        story.pages["answer"] = await person.click("Approve", "back at the client")

    async def callback_handler() -> AuthorizationCodeResult:
        params = await asyncio.wait_for(box.landed.get(), timeout=30)
        assert "code" in params, params
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    return OAuthClientProvider(
        server_url=server.mcp,
        client_metadata=OAuthClientMetadata(
            client_name="Notes <b>helper</b>",
            redirect_uris=[box.url],  # type: ignore[list-item]
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
def server(real_nextcloud: Nextcloud, tmp_path: Path) -> Iterator[AuthzServer]:
    with nextcloud_signin_server(
        real_nextcloud, tmp_path / "store.sqlite3", auth_server_access_token_seconds=60
    ) as running:
        yield running


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_server(
    request: pytest.FixtureRequest, real_nextcloud: Nextcloud, tmp_path: Path
) -> Iterator[AuthzServer]:
    """The server on either store: states, pending and stored grants are the store's."""
    with contextlib.ExitStack() as stack:
        extra: dict[str, Any] = {}
        if request.param == "postgresql":
            cluster: PostgresCluster = request.getfixturevalue("postgres")
            extra["store_url"] = stack.enter_context(cluster.database())
        yield stack.enter_context(
            nextcloud_signin_server(
                real_nextcloud, tmp_path / "store.sqlite3", auth_server_access_token_seconds=60, **extra
            )
        )


async def test_a_person_adds_the_server_signs_in_at_nextcloud_approves_and_reads_notes(
    any_store_server: AuthzServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    server = any_store_server
    real_nextcloud.add_note(real_nextcloud.alice, title="Boat plan", content="budget for the boat")
    story = Story()
    async with browser.person("alice", screenshots) as alice, loopback() as box:
        provider = client_for(server, alice, real_nextcloud.alice.password, box, story)
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            streamable_http_client(server.mcp, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = structured(await session.call_tool("nc_notes_list_notes", {}))
            [note] = listed["notes"]
            read_back = structured(await session.call_tool("nc_notes_get_note", {"note_id": note["id"]}))
            tokens = await provider.context.storage.get_tokens()
            assert tokens is not None
            assert tokens.refresh_token is not None
            claims = jwt.decode(tokens.access_token, options={"verify_signature": False})
            # the access token expires (60 s here): the SDK refreshes with the rotated refresh token
            provider.context.token_expiry_time = 1.0
            found = structured(await session.call_tool("nc_notes_search_notes", {"query": "boat"}))
            renewed = await provider.context.storage.get_tokens()
    consent = story.pages["consent"]
    assert consent.url.startswith(f"{server.base}/oauth/consent?request=")
    assert "Allow Notes <b>helper</b> to use your Nextcloud?" in consent.text  # shown as text, escaped
    assert "You are signed in to Nextcloud as alice." in consent.text
    assert "Read your notes" in consent.text
    assert "127.0.0.1" in consent.text  # where the answer goes
    assert consent.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in consent.headers["content-security-policy"]
    assert "You can close this window." in story.pages["answer"].text
    # no page refused a style, form or redirect of ours (Nextcloud's pages log their own chatter)
    assert not [line for line in alice.console if "Content Security Policy" in line or "Refused" in line]
    assert note["title"] == "Boat plan"
    assert read_back["content"] == "budget for the boat"
    assert [hit["title"] for hit in found["hits"]] == ["Boat plan"]
    assert claims["sub"] == "alice"
    assert claims["aud"] in (server.mcp, [server.mcp])
    assert claims["exp"] - claims["iat"] == 60
    assert renewed is not None
    assert renewed.refresh_token not in (None, tokens.refresh_token)
    assert renewed.access_token != tokens.access_token
    grant = server.run(server.runtime.store.get_grant("alice"))  # type: ignore[union-attr]
    assert (grant.provider, grant.kind) == ("nextcloud-oauth2", "refresh_token")
    assert len(screenshots.taken) == 5  # one trip through the browser, no second consent


async def test_a_client_known_by_its_metadata_document_gets_the_same_story(
    real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots, tmp_path: Path
) -> None:
    """Registration by client ID metadata document (served over https by a throwaway CA the
    server was told to trust): no /register, and the consent page names the document's client."""
    real_nextcloud.add_note(real_nextcloud.alice, title="Garden", content="plant the tulips")
    story = Story()
    async with browser.person("alice", screenshots) as alice, loopback() as box:
        with (
            document_host(tmp_path, redirect_uri=box.url) as documents,
            nextcloud_signin_server(
                real_nextcloud,
                tmp_path / "store.sqlite3",
                auth_server_cimd_allow_private=True,
                auth_server_cimd_ca_bundle=documents.ca_bundle,
            ) as server,
        ):
            client_id = documents.url("good.json")
            provider = client_for(
                server, alice, real_nextcloud.alice.password, box, story, client_metadata_url=client_id
            )
            async with (
                httpx2.AsyncClient(auth=provider, timeout=60) as http,
                streamable_http_client(server.mcp, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = structured(await session.call_tool("nc_notes_list_notes", {}))
    consent = story.pages["consent"]
    assert "Allow Metadata document client to use your Nextcloud?" in consent.text
    assert client_id in consent.text
    assert parse_qs(urlsplit(story.authorize_url).query)["client_id"] == [client_id]
    assert [note["title"] for note in listed["notes"]] == ["Garden"]
    assert "good.json" in documents.fetched


async def test_a_consent_page_framed_by_another_origin_is_not_rendered(
    server: AuthzServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    """A page of another origin (same site, so the Lax cookie would go along) frames the consent
    page that alice's browser may see: the browser refuses to render it. A page of ours without
    those headers, framed beside it, renders - the check can tell the difference."""
    story = Story()
    async with browser.person("alice", screenshots) as alice, loopback() as box:
        client = server.register(box.url, client_name="Framed client")
        pkce = Pkce.new()
        asked = server.authorize(client["client_id"], box.url, pkce)
        assert asked.status_code == 302, asked.text
        consent = await _through_nextcloud(
            alice, f"{server.base}{asked.headers['location']}" if asked.headers["location"].startswith("/")
            else asked.headers["location"], real_nextcloud.alice.password, story,
        )  # fmt: skip
        assert "Allow Framed client" in consent.text
        focused = await browser.run(_tab_order, alice, 2)
        approve = await browser.run(_colours, alice, "button.primary")
        decline = await browser.run(_colours, alice, "button.secondary")
        page = (
            "<!doctype html><title>Win a prize</title><h1>Win a prize</h1>"
            f"<iframe id=victim src='{consent.url}' width=600 height=300></iframe>"
            f"<iframe id=control src='{box.url}?nothing=1' width=600 height=100></iframe>"
        )
        framing = Starlette(routes=[Route("/", lambda request: HTMLResponse(page))])
        with serve_in_thread(framing, port=0) as attacker:
            seen = await alice.open(attacker + "/", "another origin framing the consent page")
            victim = await browser.run(_frame_text, alice, "#victim")
            control = await browser.run(_frame_text, alice, "#control")
    assert focused == ["Approve", "Decline"]  # reachable by keyboard, in reading order
    assert _contrast(*approve) >= 4.5  # WCAG AA for normal text
    assert _contrast(*decline) >= 4.5
    assert "Win a prize" in seen.text
    assert "You can close this window." in control
    assert "Approve" not in victim
    assert "Allow" not in victim
    assert any("frame-ancestors" in line or "X-Frame-Options" in line for line in alice.console), (
        alice.console
    )


def _frame_text(person: Person, selector: str) -> str:
    """What a framed document shows (Chromium's error text when it refused to render it)."""
    try:
        return str(person.page.frame_locator(selector).locator("body").inner_text(timeout=5000))
    except Exception as exc:  # no body at all: nothing rendered
        return f"<nothing: {type(exc).__name__}>"


def _tab_order(person: Person, presses: int) -> list[str]:
    """The labels of the elements keyboard focus reaches, one Tab at a time."""
    labels = []
    for _ in range(presses):
        person.page.keyboard.press("Tab")
        labels.append(str(person.page.evaluate("document.activeElement.textContent")))
    return labels


def _colours(person: Person, selector: str) -> tuple[str, str]:
    element = person.page.locator(selector)
    return (
        str(element.evaluate("e => getComputedStyle(e).color")),
        str(element.evaluate("e => getComputedStyle(e).backgroundColor")),
    )


def _contrast(foreground: str, background: str) -> float:
    """The WCAG contrast ratio of two CSS `rgb(...)` colours."""

    def luminance(colour: str) -> float:
        channels = [int(part) / 255 for part in colour[colour.index("(") + 1 : -1].split(",")[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


async def test_login_flow_sign_in_with_the_hand_off_page(
    real_nextcloud: Nextcloud,
    browser: Browser,
    screenshots: Screenshots,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NEXTCLOUD_CONSENT_PROVIDER=login-flow-v2: our hand-off page, Nextcloud's Login Flow pages,
    then our consent page once the background poll has the app password; then the notes. The
    person follows the link in the same tab and reloads the hand-off page by hand (its own reload
    is slowed down here, so that every page shown is one the test captured)."""
    monkeypatch.setattr(signin_flow, "REFRESH_SECONDS", 600)
    real_nextcloud.add_note(real_nextcloud.alice, title="Recipes", content="bread")
    story = Story()
    async with browser.person("alice", screenshots) as alice, loopback() as box:
        with login_flow_server(real_nextcloud, tmp_path / "store.sqlite3") as server:

            async def redirect_handler(url: str) -> None:
                handoff = await alice.open(url, "our hand-off page")
                story.pages["handoff"] = handoff
                link = await browser.run(_attribute, alice, "a[target=_blank]", "href")
                story.pages["connect"] = await alice.open(link, "nextcloud login flow")
                await alice.click("Log in", "nextcloud login form")
                await alice.sign_in("alice", real_nextcloud.alice.password, "nextcloud grant access")
                story.pages["connected"] = await alice.click("Grant access", "nextcloud account connected")
                request_id = parse_qs(urlsplit(handoff.url).query)["request"][0]
                await _until_signed_in(server, request_id)
                story.pages["consent"] = await alice.open(f"{handoff.url}&wait=1", "our consent page")
                story.pages["answer"] = await alice.click("Approve", "back at the client")

            provider = client_for(server, alice, "", box, story)
            provider.context.redirect_handler = redirect_handler
            async with (
                httpx2.AsyncClient(auth=provider, timeout=60) as http,
                streamable_http_client(server.mcp, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = structured(await session.call_tool("nc_notes_list_notes", {}))
            grant = server.run(server.runtime.store.get_grant("alice"))  # type: ignore[union-attr]
    handoff = story.pages["handoff"]
    assert "Sign in with your Nextcloud account" in handoff.text
    assert "Never send this link to anyone, and never open one that someone sent you" in handoff.text
    assert handoff.headers["content-security-policy"].startswith("default-src 'none'")
    assert "Account connected" in story.pages["connected"].text
    assert story.pages["consent"].url.startswith(f"{server.base}/oauth/consent?request=")
    assert "You can close this window." in story.pages["answer"].text
    assert [note["title"] for note in listed["notes"]] == ["Recipes"]
    assert (grant.provider, grant.kind) == ("login-flow-v2", "app_password")


@contextlib.contextmanager
def login_flow_server(nextcloud: Nextcloud, store: Path) -> Iterator[AuthzServer]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = load_settings(
        env_file=None,
        nextcloud_host=nextcloud.url,
        mcp_public_url=f"{base}/mcp",
        auth_server_enabled=True,
        nextcloud_consent_provider="login-flow-v2",
        auth_server_login_flow_signin=True,  # the accepted risk of ADR 0033
        token_encryption_key=KEY,
        store_path=store,
    )
    runtime = LoopRuntime(settings)
    with serve_in_thread(create_app(settings, runtime=runtime), port=port):
        yield AuthzServer(base, settings, runtime)


def _attribute(person: Person, selector: str, name: str) -> str:
    return str(person.page.locator(selector).get_attribute(name))


async def _until_signed_in(server: AuthzServer, request_id: str) -> None:
    """Until the background poll has bound the user (the person's next reload goes on)."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        request = await asyncio.to_thread(server.run, server.runtime.authorization_requests.get(request_id))
        if request is not None and request.user_id == "alice":
            return
        assert asyncio.get_running_loop().time() < deadline, "the Login Flow poll never bound the user"
        await asyncio.sleep(0.2)
