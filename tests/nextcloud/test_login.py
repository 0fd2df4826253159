"""Nextcloud's OAuth2 app and Login Flow v2 clients: answers real Nextcloud gives, and broken ones
(http_mock fakes the transport; the flows themselves run against the double in the integration tests)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, ServerError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.login import LoginFlow, LoginFlowV2, NextcloudOAuth2, OAuth2Refused
from tests import http_mock

BASE = "http://nextcloud:8080/cloud"  # an internal address with a base path
PUBLIC = "https://cloud.example.com/cloud"
TOKEN = f"{BASE}/index.php/apps/oauth2/api/v1/token"


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
async def http() -> NextcloudHTTP:
    client = NextcloudHTTP(BASE, max_retries=0, sleep=_no_sleep)
    yield client  # type: ignore[misc]
    await client.aclose()


def test_the_authorize_url_is_on_the_browser_address_with_pkce(http: NextcloudHTTP) -> None:
    oauth = NextcloudOAuth2(http, "cid", "secret", PUBLIC)
    url = oauth.authorization_url(redirect_uri="https://mcp.example.com/cb", state="s1", challenge="c" * 43)
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{PUBLIC}/index.php/apps/oauth2/authorize"
    assert query == {
        "response_type": "code",
        "client_id": "cid",
        "redirect_uri": "https://mcp.example.com/cb",
        "state": "s1",
        "code_challenge": "c" * 43,
        "code_challenge_method": "S256",
    }
    assert "secret" not in url


@http_mock.mock
async def test_a_refresh_sends_the_client_and_reads_user_id(http: NextcloudHTTP) -> None:
    route = http_mock.post(TOKEN).respond(
        json={
            "access_token": "a1",
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": "r2",
            "user_id": "alice",
        }
    )
    tokens = await NextcloudOAuth2(http, "cid", "secret", PUBLIC).refresh("r1")
    sent = parse_qs(route.calls.last.request.content.decode())
    assert sent == {
        "grant_type": ["refresh_token"],
        "refresh_token": ["r1"],
        "client_id": ["cid"],
        "client_secret": ["secret"],
    }
    assert (tokens.refresh_token, tokens.user_id, tokens.expires_in) == ("r2", "alice", 3600.0)
    assert "a1" not in repr(tokens)


@pytest.mark.parametrize(
    ("error", "rejected"), [("invalid_request", True), ("invalid_grant", True), ("invalid_client", False)]
)
@http_mock.mock
async def test_refusals_say_whether_the_token_itself_is_dead(
    http: NextcloudHTTP, error: str, rejected: bool
) -> None:
    http_mock.post(TOKEN).respond(400, json={"error": error})
    with pytest.raises(OAuth2Refused) as raised:
        await NextcloudOAuth2(http, "cid", "secret", PUBLIC).refresh("r1")
    assert raised.value.error == error
    assert raised.value.token_rejected is rejected


@pytest.mark.parametrize(
    "answer",
    [
        http_mock.Response(200, text="<html>maintenance</html>", headers={"content-type": "text/html"}),
        http_mock.Response(200, json=["not", "an", "object"]),
        http_mock.Response(200, json={"access_token": "a", "expires_in": 3600}),
    ],
    ids=["html", "list", "no-refresh-token"],
)
@http_mock.mock
async def test_a_malformed_token_answer_is_an_invalid_response(
    http: NextcloudHTTP, answer: http_mock.Response
) -> None:
    http_mock.post(TOKEN).mock(return_value=answer)
    with pytest.raises(InvalidResponse):
        await NextcloudOAuth2(http, "cid", "secret", PUBLIC).exchange_code("code", "v" * 43, "https://x/cb")


@http_mock.mock
async def test_a_token_endpoint_failure_is_not_retried(http: NextcloudHTTP) -> None:
    """A POST that may have reached Nextcloud is never sent twice (it would burn the code)."""
    route = http_mock.post(TOKEN).respond(503)
    with pytest.raises(ServerError):
        await NextcloudOAuth2(http, "cid", "secret", PUBLIC).exchange_code("code", "v" * 43, "https://x/cb")
    assert route.call_count == 1


@http_mock.mock
async def test_login_flow_urls_move_to_the_public_address_and_the_poll_stays_internal(
    http: NextcloudHTTP,
) -> None:
    start = http_mock.post(f"{BASE}/index.php/login/v2").respond(
        json={
            "poll": {"token": "pt", "endpoint": "http://nextcloud:8080/cloud/index.php/login/v2/poll"},
            "login": "http://nextcloud:8080/cloud/index.php/login/v2/flow/lt",
        }
    )
    flow = await LoginFlowV2(http, PUBLIC).start(user_agent="Nextcloud MCP server (mcp.example.com)")
    assert flow.login_url == f"{PUBLIC}/index.php/login/v2/flow/lt"
    assert flow.poll_path == "/index.php/login/v2/poll"
    assert start.calls.last.request.headers["user-agent"] == "Nextcloud MCP server (mcp.example.com)"
    unchanged = await LoginFlowV2(http, None).start(user_agent="x")
    assert unchanged.login_url == "http://nextcloud:8080/cloud/index.php/login/v2/flow/lt"


@http_mock.mock
async def test_polling_answers_nothing_until_granted_then_the_app_password(http: NextcloudHTTP) -> None:
    poll = http_mock.post(f"{BASE}/index.php/login/v2/poll")
    poll.side_effect = [
        http_mock.Response(404, json=[]),
        http_mock.Response(200, json={"server": BASE, "loginName": "alice@example.com", "appPassword": "pw"}),
    ]
    flows = LoginFlowV2(http)
    flow = LoginFlow("https://x/login", "pt", "/index.php/login/v2/poll")
    assert await flows.poll(flow) is None
    password = await flows.poll(flow)
    assert password is not None
    assert (password.login_name, password.password) == ("alice@example.com", "pw")
    assert parse_qs(poll.calls.last.request.content.decode()) == {"token": ["pt"]}
    assert "pw" not in repr(password)


@http_mock.mock
async def test_a_poll_answer_without_the_password_is_an_invalid_response(http: NextcloudHTTP) -> None:
    http_mock.post(f"{BASE}/index.php/login/v2/poll").respond(json={"server": BASE})
    with pytest.raises(InvalidResponse, match="lacks the app password"):
        await LoginFlowV2(http).poll(LoginFlow("https://x/login", "pt", "/index.php/login/v2/poll"))
