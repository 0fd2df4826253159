"""A grant Nextcloud stops accepting, on the real Nextcloud 34 (issue 39, ADR 0064).

Nextcloud's OAuth2 app keeps the app token of a grant encrypted with the current refresh token;
when that no longer decrypts (two refreshes crossing Nextcloud's own re-check, a replaced secret),
every refresh of the grant answers a bare `500` page - "HMAC does not match" in Nextcloud's log -
while the token endpoint answers anything else normally (measured on 34; the issue's run met it on
29). The break is made here as it is found:
the stored ciphertext of the grant no longer fits. The server must see that it lasts, drop the
grant, delete its app token at Nextcloud, and lead the person through consent again."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import ClientRequestContext
from mcp.types import ElicitResult

from nextcloud_mcp_server.auth.offline import BROKEN_AFTER, BROKEN_FOR_SECONDS
from tests.backends import Nextcloud
from tests.browser import Browser, Screenshots
from tests.mcp_clients import http_session, structured
from tests.nextcloud_pages import NextcloudPages
from tests.offline import Completions, real_offline_server
from tests.oidc import IdP

pytestmark = pytest.mark.integration


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000_000.0

    def __call__(self) -> float:
        return self.now


async def _no_form(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def _app_tokens(nextcloud: Nextcloud, user: str) -> dict[int, str]:
    assert nextcloud.instance is not None
    return nextcloud.instance.app_tokens(user)


def _break_grant_at_nextcloud(nextcloud: Nextcloud) -> None:
    """Make the newest OAuth2 grant's stored app token undecryptable (one character changed)."""
    assert nextcloud.instance is not None
    with sqlite3.connect(nextcloud.instance.dir / "data" / "owncloud.db") as db:
        row_id, sealed = db.execute(
            "SELECT id, encrypted_token FROM oc_oauth2_access_tokens ORDER BY id DESC LIMIT 1"
        ).fetchone()
        changed = sealed[:-3] + ("a" if sealed[-3] != "a" else "b") + sealed[-2:]
        db.execute("UPDATE oc_oauth2_access_tokens SET encrypted_token = ? WHERE id = ?", (changed, row_id))


Consent = Callable[[str], Awaitable[None]]  # the person answering a consent link


async def _consent(session: Any, completions: Completions, person: Consent) -> str:
    """Answer the URL elicitation the next call raises; its message."""
    with pytest.raises(MCPError) as raised:
        await session.call_tool("nc_webdav_list_directory", {"path": "/"})
    assert raised.value.code == -32042
    [asked] = raised.value.error.data["elicitations"]
    await person(str(asked["url"]))
    with anyio.fail_after(30):
        await completions.event(asked["elicitationId"]).wait()
    return str(asked["message"])


async def _broken_grant_leads_back_to_consent(
    nextcloud: Nextcloud, idp: IdP, tmp_path: Path, person: Consent
) -> None:
    clock = Clock()
    before = _app_tokens(nextcloud, "alice")
    completions = Completions()
    with real_offline_server(
        nextcloud, idp, tmp_path / "store.sqlite3", "nextcloud-oauth2", clock=clock
    ) as server:
        async with http_session(
            server.mcp,
            headers=server.headers("alice"),
            elicitation_callback=_no_form,
            message_handler=completions.handler,
        ) as session:
            await _consent(session, completions, person)
            structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
            issued = set(_app_tokens(nextcloud, "alice")) - set(before)
            assert len(issued) == 1

            _break_grant_at_nextcloud(nextcloud)
            clock.now += 3600  # the access token falls due: the next call refreshes
            for _ in range(BROKEN_AFTER - 1):  # Nextcloud's failure, while it may still pass
                passing = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
                assert passing.is_error
                assert server.grants() == ["alice"]
            clock.now += BROKEN_FOR_SECONDS
            with pytest.raises(MCPError) as raised:  # it lasted: given up, consent asked again
                await session.call_tool("nc_webdav_list_directory", {"path": "/"})
            assert raised.value.code == -32042
            message = str(raised.value.error.data["elicitations"][0]["message"])
            assert server.grants() == []
            after_drop = _app_tokens(nextcloud, "alice")

            await _consent(session, completions, person)
            listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        failed = server.store_rows("SELECT detail FROM audit WHERE subject = 'alice' AND event = 'failed'")

    assert "connection of this server to your Nextcloud is no longer accepted" in message
    assert "removed from your Nextcloud" in message
    assert set(after_drop) == set(before)  # the broken grant's app token was deleted at Nextcloud
    assert listed["total"] >= 0
    assert any("failed for this grant (HTTP 500)" in detail for (detail,) in failed), failed


async def test_a_grant_nextcloud_34_fails_on_for_good_is_dropped_deleted_and_asked_again(
    real_nextcloud_34: Nextcloud, idp: IdP, tmp_path: Path
) -> None:
    """Nextcloud 34's pages, driven over HTTP (they do not render in the kit)."""
    nextcloud = real_nextcloud_34

    with NextcloudPages(nextcloud.url) as pages:  # still signed in at the second consent

        async def person(url: str) -> None:
            last = await asyncio.to_thread(pages.follow, url, "alice", nextcloud.alice.password)
            assert "Your Nextcloud is connected" in last.text, pages.steps

        await _broken_grant_leads_back_to_consent(nextcloud, idp, tmp_path, person)
    assert sum("/login?" in step for step in pages.steps) == 1, pages.steps


@pytest.mark.browser
async def test_a_grant_nextcloud_29_fails_on_for_good_is_dropped_deleted_and_asked_again(
    real_nextcloud: Nextcloud, idp: IdP, tmp_path: Path, browser: Browser, screenshots: Screenshots
) -> None:
    """Nextcloud 29 (where the issue met the break), its pages in Chromium."""
    nextcloud = real_nextcloud
    consents = 0

    async with browser.person("alice", screenshots) as alice:  # still signed in at the second consent

        async def person(url: str) -> None:
            nonlocal consents
            consents += 1
            picker = await alice.open(url, "connect to your account")
            assert "Connect to your account" in picker.text, picker.text
            if consents == 1:
                await alice.click("Log in", "login form")
                grant = await alice.sign_in("alice", nextcloud.alice.password, "grant access")
            else:
                grant = await alice.click("Log in", "grant access again")
            assert "Account access" in grant.text, grant.text
            last = await alice.click("Grant access", "connected")
            assert "Your Nextcloud is connected" in last.text, last.text

        await _broken_grant_leads_back_to_consent(nextcloud, idp, tmp_path, person)
    assert consents == 2
