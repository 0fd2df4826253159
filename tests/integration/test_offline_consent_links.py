"""The consent link of offline access, end to end (a real IdP, the server over streamable HTTP,
a real SQLite store, the Nextcloud double): a link and its callback work once, an unknown, expired
or foreign one is refused, another user signing in connects nobody, an IdP's error is explained,
and every page answers with strict security headers."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.mcp_clients import http_session
from tests.offline import (  # noqa: F401 - the fixture
    CONSENT_META,
    OfflineServer,
    browse,
    server_fixture,
    walk_to_callback,
)

pytestmark = pytest.mark.integration


async def _consent_link(server: OfflineServer, user: str) -> str:
    async with http_session(server.mcp, headers=server.headers(user)) as session:
        asked = await session.call_tool("nc_webdav_list_directory", {"path": "/"})
    return str((asked.meta or {})[CONSENT_META]["url"])


async def test_a_callback_state_works_once(server: OfflineServer) -> None:
    """Replaying the callback (same state, same code) is refused and changes nothing."""
    callback = await asyncio.to_thread(walk_to_callback, await _consent_link(server, "alice"))
    first, again = browse(callback), browse(callback)
    assert first.status_code == 200
    assert again.status_code == 400
    assert "already used" in again.text
    granted = server.store_rows("SELECT COUNT(*) FROM audit WHERE event = 'granted'")
    assert granted == [(1,)]


def test_an_unknown_state_is_refused(server: OfflineServer) -> None:
    page = browse(f"{server.base}/oauth/callback-nextcloud?state=made-up&code=whatever")
    assert page.status_code == 400
    assert server.grants() == []


async def test_every_consent_answer_carries_strict_security_headers(server: OfflineServer) -> None:
    """The redirect, the success page and the error pages of the consent routes: no script, no
    framing, no sniffing, no caching, no Referer; the CSP allows exactly the page's own style."""
    link = await _consent_link(server, "alice")
    redirect = httpx.get(link)
    callback = await asyncio.to_thread(walk_to_callback, await _consent_link(server, "alice"))
    answers = {
        "redirect": redirect,
        "connected": browse(callback),
        "used link": browse(link),
        "used state": browse(callback),
        "unknown state": browse(f"{server.base}/oauth/callback-nextcloud?state=made-up&code=x"),
        "no elicitation": browse(f"{server.base}/oauth/authorize-nextcloud"),
    }
    assert {name: a.status_code for name, a in answers.items()} == {
        "redirect": 303,
        "connected": 200,
        "used link": 400,
        "used state": 400,
        "unknown state": 400,
        "no elicitation": 400,
    }
    for name, answer in answers.items():
        headers = answer.headers
        assert headers["x-content-type-options"] == "nosniff", name
        assert headers["x-frame-options"] == "DENY", name
        assert headers["referrer-policy"] == "no-referrer", name
        assert headers["cache-control"] == "no-store", name
        policy = dict(d.strip().partition(" ")[::2] for d in headers["content-security-policy"].split(";"))
        assert policy["default-src"] == "'none'", name
        assert policy["frame-ancestors"] == "'none'", name
        assert policy["base-uri"] == "'none'", name
        assert "script-src" not in policy, name
        assert "unsafe-inline" not in headers["content-security-policy"], name
        if name != "redirect":
            style = answer.text.split("<style>", 1)[1].split("</style>", 1)[0]
            digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
            assert policy["style-src"] == f"'sha256-{digest}'", name
            assert "<script" not in answer.text, name


async def test_a_consent_link_works_once(server: OfflineServer) -> None:
    link = await _consent_link(server, "alice")
    await asyncio.to_thread(walk_to_callback, link)
    reused = browse(link)
    assert reused.status_code == 400
    assert "already used" in reused.text


async def test_an_expired_consent_link_is_refused(server: OfflineServer) -> None:
    link = await _consent_link(server, "alice")
    server.store_rows("UPDATE elicitations SET expires_at = 0")  # an old link, as time would make it
    page = browse(link)
    assert page.status_code == 400
    assert "expired" in page.text
    assert server.grants() == []


async def test_signing_in_as_another_user_connects_nobody(server: OfflineServer) -> None:
    """Alice's consent link, completed by Bob's sign-in: refused; no grant for either."""
    link = await _consent_link(server, "alice")
    callback = await asyncio.to_thread(walk_to_callback, link, change={"login_hint": "bob"})
    page = browse(callback)
    assert page.status_code == 403
    assert "different account" in page.text
    assert server.grants() == []
    assert server.store_rows("SELECT status FROM elicitations") == [("failed",)]


async def test_an_error_from_the_identity_provider_is_explained(server: OfflineServer) -> None:
    link = await _consent_link(server, "alice")
    callback = await asyncio.to_thread(walk_to_callback, link)
    state = parse_qs(urlsplit(callback).query)["state"][0]
    page = browse(
        f"{server.base}/oauth/callback-nextcloud?" + urlencode({"state": state, "error": "access_denied"})
    )
    assert page.status_code == 400
    assert "access_denied" in page.text
    assert server.grants() == []
