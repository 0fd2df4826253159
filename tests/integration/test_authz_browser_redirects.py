"""Issue 31, findings 3 and 4 in a browser (Debian's Chromium) against the real Nextcloud: a
client cannot register a `javascript:` redirect URI; a link an attacker sends - for a client
stored before the policy, or with a `javascript:` redirect_uri of its own - is refused on the
first page, and no page ever navigates to, runs, links to or shows such a URL. The control: a
real client's person signs in at Nextcloud, declines on our consent page and lands back at the
client with `error=access_denied` and `iss`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from mcp.shared.auth import OAuthClientInformationFull

from tests.authz_server import AuthzServer, Pkce
from tests.backends import Nextcloud
from tests.browser import Browser, Person, Screenshots
from tests.integration.test_authz_browser import Story, _through_nextcloud, loopback, nextcloud_signin_server

pytestmark = [pytest.mark.integration, pytest.mark.browser]

SCRIPT = "javascript:alert(document.cookie)"


@pytest.fixture
def server(real_nextcloud: Nextcloud, tmp_path: Path) -> Iterator[AuthzServer]:
    with nextcloud_signin_server(real_nextcloud, tmp_path / "store.sqlite3") as running:
        yield running


def authorize_url(server: AuthzServer, client_id: str, redirect_uri: str | None, **extra: str) -> str:
    params = {
        "response_type": "code", "client_id": client_id, "code_challenge": Pkce.new().challenge,
        "code_challenge_method": "S256", "state": "st-browser", "resource": server.mcp, **extra,
    }  # fmt: skip
    if redirect_uri is not None:
        params["redirect_uri"] = redirect_uri
    return f"{server.base}/authorize?{urlencode(params)}"


def _watch(person: Person, seen: list[str]) -> None:
    """Every URL the tab navigates to or requests, and every dialog a script would open."""

    def dialog(opened: Any) -> None:
        seen.append(f"dialog: {opened.message}")
        opened.dismiss()

    person.page.on("framenavigated", lambda frame: seen.append(frame.url))
    person.page.on("request", lambda request: seen.append(request.url))
    person.page.on("dialog", dialog)


def _targets(person: Person) -> list[str]:
    """Where the shown page's links and forms lead."""
    return [
        str(target)
        for target in person.page.eval_on_selector_all(
            "a[href], form[action], [src]", "els => els.map(e => e.href || e.action || e.src)"
        )
    ]


async def test_a_javascript_redirect_is_refused_and_never_reached_in_the_browser(
    server: AuthzServer, real_nextcloud: Nextcloud, browser: Browser, screenshots: Screenshots
) -> None:
    with server.http() as http:
        registered = http.post(
            "/register", json={"redirect_uris": [SCRIPT], "token_endpoint_auth_method": "none"}
        )
    assert registered.status_code == 400
    assert registered.json()["error"] == "invalid_redirect_uri"
    # a client stored before the policy existed, and a sound one an attacker borrows
    assert server.runtime.auth_server is not None
    old = OAuthClientInformationFull.model_validate(
        {"client_id": "old-client", "redirect_uris": [SCRIPT], "token_endpoint_auth_method": "none",
         "scope": "notes:read", "client_name": "Old client"}
    )  # fmt: skip
    server.run(server.runtime.auth_server.provider.clients.register(old))
    seen: list[str] = []
    story = Story()
    async with browser.person("alice", screenshots) as alice, loopback() as box:
        sound = server.register(box.url, client_name="Sound client")
        await browser.run(_watch, alice, seen)
        refusals = {
            "stored": await alice.open(
                authorize_url(server, "old-client", None), "stored javascript client refused"
            ),
            "explicit": await alice.open(
                authorize_url(server, sound["client_id"], SCRIPT), "javascript redirect_uri refused"
            ),
            "with an error": await alice.open(
                authorize_url(server, sound["client_id"], SCRIPT, scope="nothing:known"),
                "javascript redirect_uri with a bad scope refused",
            ),
        }
        targets = {name: await browser.run(_targets, alice) for name in refusals}
        # the control: the sound client's person signs in at the real Nextcloud and declines
        consent = await _through_nextcloud(
            alice, authorize_url(server, sound["client_id"], box.url), real_nextcloud.alice.password, story
        )
        back = await alice.click("Decline", "back at the client")
        landed = await asyncio.wait_for(box.landed.get(), timeout=30)
    for name, page in refusals.items():
        assert page.status == 400, name
        assert page.url.startswith(f"{server.base}/authorize?"), name
        assert "javascript: scheme" in json.loads(page.text)["error_description"], name
        assert "alert(" not in page.text, name
        assert not targets[name], name
    assert "Allow Sound client to use your Nextcloud?" in consent.text
    assert f"your browser goes to {urlsplit(box.url).netloc}." in consent.text
    assert "javascript" not in consent.text
    assert "You can close this window." in back.text
    assert landed["error"] == "access_denied"
    assert landed["state"] == "st-browser"
    assert landed["iss"] == server.settings.auth_server_issuer
    assert not [url for url in seen if url.lower().startswith(("javascript:", "dialog:"))], seen
    assert not [line for line in alice.console if "javascript:" in line.lower()], alice.console
