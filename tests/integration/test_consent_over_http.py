"""Consent through Nextcloud's own pages on Nextcloud 34, driven over HTTP as a browser would
(its pages do not render in the kit; on 29 the same flows run in Chromium, test_browser_consent
and test_authz_browser): the OAuth2 app and Login Flow v2 for progressive consent, and the
sign-in of our own authorization server."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import pytest
from mcp import MCPError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from tests.authz_server import Pkce, nextcloud_signin_server
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, structured
from tests.nextcloud_pages import NextcloudPages
from tests.offline import Completions, OfflineServer, real_offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration

PROVIDERS = ["nextcloud-oauth2", "login-flow-v2"]


@pytest.fixture(params=PROVIDERS)
def server(
    request: pytest.FixtureRequest, real_nextcloud_34: Nextcloud, idp: IdP, tmp_path: Path
) -> Iterator[OfflineServer]:
    with real_offline_server(real_nextcloud_34, idp, tmp_path / "store.sqlite3", request.param) as running:
        yield running


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def _tokens(nextcloud: Nextcloud, user: str) -> dict[int, str]:
    assert nextcloud.instance is not None
    return nextcloud.instance.app_tokens(user)


async def test_consent_through_nextcloud_34s_pages_gives_the_client_its_notes_until_revoked(
    server: OfflineServer, real_nextcloud_34: Nextcloud
) -> None:
    nextcloud = real_nextcloud_34
    provider = server.settings.nextcloud_consent_provider
    nextcloud.add_note(nextcloud.admin, title="Shopping", content="milk, bread")
    before = _tokens(nextcloud, "admin")
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("admin"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("nc_notes_list_notes", {})
        assert raised.value.code == -32042  # URL elicitation required
        [asked] = raised.value.error.data["elicitations"]
        with NextcloudPages(nextcloud.url) as pages:
            last = await asyncio.to_thread(pages.follow, asked["url"], "admin", nextcloud.admin.password)
        if provider == "login-flow-v2":  # Nextcloud's own last page
            assert pages.last_state == "done", pages.steps
        else:  # ours, after Nextcloud's redirect to the callback
            assert str(last.url).startswith(f"{server.base}/oauth/callback-nextcloud?"), pages.steps
            assert "Your Nextcloud is connected" in last.text
        with anyio.fail_after(30):
            await completions.event(asked["elicitationId"]).wait()
        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
        issued = {i: n for i, n in _tokens(nextcloud, "admin").items() if i not in before}
        revoked = structured(await session.call_tool("revoke_nextcloud_access", {}))
    assert [n["title"] for n in notes["notes"]] == ["Shopping"]
    assert len(issued) == 1, issued
    assert revoked == {"revoked": True, "at_provider": True}
    assert _tokens(nextcloud, "admin") == before


async def test_signing_in_at_our_authorization_server_through_nextcloud_34(
    real_nextcloud_34: Nextcloud, tmp_path: Path
) -> None:
    """This server as authorization server: sign-in through Nextcloud 34's OAuth2 app pages, our
    consent page, the code exchanged with PKCE, and a tool call with the token reads alice's notes."""
    nextcloud = real_nextcloud_34
    nextcloud.add_note(nextcloud.alice, title="Garden", content="plant the tulips")
    redirect = "http://127.0.0.1:9/cb"
    with nextcloud_signin_server(nextcloud, tmp_path / "store.sqlite3") as server:
        client = server.register(redirect)
        pkce = Pkce.new()
        asked = server.authorize(client["client_id"], redirect, pkce)
        assert asked.status_code == 302, asked.text
        signin = urljoin(server.base + "/", asked.headers["location"])
        with NextcloudPages(nextcloud.url) as pages:
            consent = await asyncio.to_thread(pages.follow, signin, "alice", nextcloud.alice.password)
            assert "You are signed in to Nextcloud as" in consent.text, pages.steps
            form = dict(re.findall(r"<input type=hidden name=(\w+) value='([^']*)'>", consent.text))
            action = re.search(r"<form method=post action='([^']+)'", consent.text)
            assert action is not None, consent.text
            decided = pages.browser.post(
                urljoin(str(consent.url), html.unescape(action.group(1))),
                data={**{k: html.unescape(v) for k, v in form.items()}, "decision": "approve"},
                headers={"Origin": server.base},
                follow_redirects=False,
            )
        landed = decided.headers.get("location", "")
        assert landed.startswith(redirect + "?"), (decided.status_code, decided.text[:300])
        code = parse_qs(urlsplit(landed).query)["code"][0]
        answer = server.token(
            grant_type="authorization_code", code=code, redirect_uri=redirect,
            client_id=client["client_id"], code_verifier=pkce.verifier,
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        bearer = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        async with http_session(server.mcp, headers=bearer) as session:
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Garden"]
