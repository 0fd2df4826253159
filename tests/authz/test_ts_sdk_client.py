"""The TypeScript SDK's own OAuth client (tests/idp/oauth_client.mjs) through the whole flow with
this server as authorization server, independently of the Python SDK: discovery from the 401,
dynamic registration, PKCE with `resource`, the person's approval (straight through
`runtime.authorization_requests`), the code exchange, a tool call as that user, and a refresh -
on the double and on the real Nextcloud."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.authz.test_sdk_client import save_grant
from tests.authz_server import AuthzServer, authz_server
from tests.backends import Nextcloud
from tests.oidc import IDP_DIR, NODE

REDIRECT = "http://127.0.0.1:9/ts-sdk-callback"


@pytest.fixture
def server(nextcloud: Nextcloud, tmp_path: Path) -> Iterator[AuthzServer]:
    with authz_server(nextcloud.url, tmp_path / "store.sqlite3") as running:
        save_grant(running, nextcloud)
        yield running


def test_the_typescript_sdk_client_registers_authorizes_calls_and_refreshes(
    server: AuthzServer, nextcloud: Nextcloud
) -> None:
    nextcloud.add_note(nextcloud.alice, title="Quarterly plan", content="budget for the boat")
    arguments = json.dumps({"query": "boat"})
    process = subprocess.Popen(
        [
            str(NODE),
            str(IDP_DIR / "oauth_client.mjs"),
            server.mcp,
            REDIRECT,
            "nc_notes_search_notes",
            arguments,
        ],
        cwd=IDP_DIR,
        env={"PATH": os.environ.get("PATH", "")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        authorize = json.loads(process.stdout.readline())["authorize"]
        with httpx.Client(follow_redirects=False, timeout=15) as browser:
            signin = browser.get(authorize)
        assert signin.status_code == 302, signin.text
        landed = server.approve(signin.headers["location"], "alice")
        process.stdin.write(landed + "\n")
        process.stdin.flush()
        events = [json.loads(line) for line in process.stdout]
        assert process.wait(30) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream:
                stream.close()
    asked = parse_qs(urlsplit(authorize).query)
    assert asked["resource"] == [server.mcp]
    assert asked["code_challenge_method"] == ["S256"]
    assert parse_qs(urlsplit(landed).query)["iss"] == [server.settings.auth_server_issuer]
    result, refreshed, again = events
    assert result["result"]["isError"] is False
    assert [hit["title"] for hit in result["result"]["structuredContent"]["hits"]] == ["Quarterly plan"]
    assert refreshed == {"refreshed": True}
    assert again["again"]["isError"] is False
