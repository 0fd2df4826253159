"""A person whose login name is not their user id - they sign in with their e-mail address, as
LDAP and SSO set-ups allow (issue 27). Nextcloud binds an app password or an OAuth2 token to the
name typed at sign-in on 34 (the e-mail address), to the user id on 29: the tools find the user's
DAV paths by the user id Nextcloud reports, and send the Notes API the name the secret is bound to.
Against both real Nextclouds; the pages of 34 are driven over HTTP (tests/nextcloud_pages.py)."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx
import pytest
from mcp import MCPError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from nextcloud_mcp_server.diagnostics import run_checks
from tests.authz_server import Pkce, nextcloud_signin_server
from tests.backends import Login, Nextcloud
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_pages import NextcloudPages
from tests.offline import Completions, OfflineServer, real_offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration

EMAIL = "alice@example.com"


def _with_email(nextcloud: Nextcloud) -> None:
    """Alice gets an e-mail address, through Nextcloud's own API (the admin's login password:
    changing an account asks for it)."""
    with httpx.Client(base_url=nextcloud.url, auth=(nextcloud.admin.user, nextcloud.admin.password)) as admin:
        answer = admin.put(
            "/ocs/v2.php/cloud/users/alice",
            data={"key": "email", "value": EMAIL},
            headers={"OCS-APIRequest": "true", "Accept": "application/json"},
        )
    assert answer.status_code == 200, answer.text


def _app_password_by_email(nextcloud: Nextcloud) -> str:
    """What a client that signs in with the e-mail address gets (the desktop and phone clients)."""
    with httpx.Client(base_url=nextcloud.url, auth=(EMAIL, nextcloud.alice.password)) as client:
        answer = client.get(
            "/ocs/v2.php/core/getapppassword",
            headers={"OCS-APIRequest": "true", "Accept": "application/json"},
        )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["ocs"]["data"]["apppassword"])


async def test_an_app_password_from_an_email_login_works_for_every_toolset(
    each_real_nextcloud: Nextcloud,
) -> None:
    nextcloud = each_real_nextcloud
    _with_email(nextcloud)
    token = _app_password_by_email(nextcloud)
    login = EMAIL if nextcloud.major >= 30 else "alice"  # the name Nextcloud bound the password to
    settings = nextcloud.settings(Login(login, nextcloud.alice.password, token, "Alice"))
    checks = {c.name: c for c in await run_checks(settings)}
    assert checks["credentials"].detail.startswith("logged in as 'alice'"), checks
    with running_app(settings) as url:
        async with http_session(url + "/mcp") as session:
            note = structured(
                await session.call_tool("nc_notes_create_note", {"title": "Mail login", "content": "x"})
            )
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))
            structured(
                await session.call_tool("nc_webdav_write_file", {"path": "mail.txt", "content": "hello"})
            )
            read = await session.call_tool("nc_webdav_read_file", {"path": "mail.txt"})
            event = structured(
                await session.call_tool(
                    "nc_calendar_create_event", {"summary": "Call", "start": "2026-12-03T10:00:00"}
                )
            )
            contact = structured(
                await session.call_tool("nc_contacts_create_contact", {"full_name": "Dora Kiwi"})
            )
    assert [n["title"] for n in notes["notes"]] == [note["title"]]
    assert read.content[1].text == "hello"  # type: ignore[union-attr]
    assert nextcloud.read_file(nextcloud.alice, "mail.txt") == b"hello"
    assert event["calendar"] == "personal"
    assert contact["full_name"] == "Dora Kiwi"


PROVIDERS = ["nextcloud-oauth2", "login-flow-v2"]


@pytest.fixture(params=PROVIDERS)
def server(
    request: pytest.FixtureRequest, real_nextcloud_34: Nextcloud, idp: IdP, tmp_path: Path
) -> Iterator[OfflineServer]:
    _with_email(real_nextcloud_34)
    with real_offline_server(real_nextcloud_34, idp, tmp_path / "store.sqlite3", request.param) as running:
        yield running


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def test_consent_signed_in_with_the_email_address_on_34(
    server: OfflineServer, real_nextcloud_34: Nextcloud
) -> None:
    """Nextcloud 34 binds the new credential to the e-mail address: the OAuth2 app's token works
    as a Basic password (for the Notes API) only with it. It used to be refused ("Sign in with
    your user name")."""
    nextcloud = real_nextcloud_34
    nextcloud.add_note(nextcloud.alice, title="Tulips", content="plant in autumn")
    completions = Completions()
    async with http_session(
        server.mcp,
        headers=server.headers("alice"),
        elicitation_callback=_no_form,
        message_handler=completions.handler,
    ) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("nc_notes_list_notes", {})
        [asked] = raised.value.error.data["elicitations"]
        with NextcloudPages(nextcloud.url) as pages:
            last = await asyncio.to_thread(pages.follow, asked["url"], EMAIL, nextcloud.alice.password)
        assert "Sign in with your user name" not in last.text, pages.steps
        with anyio.fail_after(30):
            await completions.event(asked["elicitationId"]).wait()
        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Tulips"]
    [(user_id, login)] = server.store_rows("SELECT user_id, login FROM grants")
    # the OAuth2 token (kept as a refresh token) goes with the e-mail address as its Basic name;
    # Login Flow's app password keeps the name too
    assert (user_id, login) == ("alice", EMAIL)


async def test_signing_in_at_our_authorization_server_with_the_email_address_on_34(
    real_nextcloud_34: Nextcloud, tmp_path: Path
) -> None:
    nextcloud = real_nextcloud_34
    _with_email(nextcloud)
    nextcloud.add_note(nextcloud.alice, title="Garden", content="plant the tulips")
    redirect = "http://127.0.0.1:9/cb"
    with nextcloud_signin_server(nextcloud, tmp_path / "store.sqlite3") as server:
        client = server.register(redirect)
        pkce = Pkce.new()
        asked = server.authorize(client["client_id"], redirect, pkce)
        signin = urljoin(server.base + "/", asked.headers["location"])
        with NextcloudPages(nextcloud.url) as pages:
            consent = await asyncio.to_thread(pages.follow, signin, EMAIL, nextcloud.alice.password)
            assert "You are signed in to Nextcloud as" in consent.text, (pages.steps, consent.text[:500])
            form = dict(re.findall(r"<input type=hidden name=(\w+) value='([^']*)'>", consent.text))
            action = re.search(r"<form method=post action='([^']+)'", consent.text)
            assert action is not None
            decided = pages.browser.post(
                urljoin(str(consent.url), html.unescape(action.group(1))),
                data={**{k: html.unescape(v) for k, v in form.items()}, "decision": "approve"},
                headers={"Origin": server.base},
                follow_redirects=False,
            )
        code = parse_qs(urlsplit(decided.headers["location"]).query)["code"][0]
        answer = server.token(
            grant_type="authorization_code", code=code, redirect_uri=redirect,
            client_id=client["client_id"], code_verifier=pkce.verifier,
        )  # fmt: skip
        bearer = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        async with http_session(server.mcp, headers=bearer) as session:
            notes = structured(await session.call_tool("nc_notes_list_notes", {}))
    assert [n["title"] for n in notes["notes"]] == ["Garden"]
