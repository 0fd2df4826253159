"""Unit tests of the Share API client on the recorded answers: readable failures, no secrets out,
refused input sends nothing."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.sharing.client import SharesClient
from tests import http_mock
from tests.recordings import load

BASE = "https://cloud.example.com"
SHARES = f"{BASE}/ocs/v2.php/apps/files_sharing/api/v1/shares"


@pytest.fixture
async def client() -> SharesClient:
    http = NextcloudHTTP(BASE, max_retries=0)
    yield SharesClient(http, BasicCredential("admin", "pw"))  # type: ignore[misc]
    await http.aclose()


def _answer(name: str) -> http_mock.Response:
    recording = load(name)
    return http_mock.Response(
        recording.status, text=recording.body, headers={"content-type": "application/json"}
    )


@http_mock.mock
async def test_a_refused_share_carries_nextclouds_own_message(client: SharesClient) -> None:
    """The recorded 404 for an unknown user becomes NotFound with OCS's sentence, not '404'."""
    http_mock.post(SHARES).mock(return_value=_answer("shares_create_unknown_user"))
    with pytest.raises(NotFound, match="Please specify a valid account to share with"):
        await client.create("/Taxes", "user", permissions=1, share_with="nobody")


@http_mock.mock
async def test_a_link_share_never_carries_its_password_hash_or_token_out(client: SharesClient) -> None:
    """The recorded link answer has the password's hash in two fields; the Share only says
    that there is a password."""
    http_mock.get(f"{SHARES}/1").mock(
        return_value=http_mock.Response(
            200,
            json={
                "ocs": {
                    "meta": {"statuscode": 200},
                    "data": [
                        {
                            **load("shares_update_expiry").json()["ocs"]["data"],
                            "password": "3|$argon2id$secret-hash",
                            "share_with": "3|$argon2id$secret-hash",
                        }
                    ],
                }
            },
        )
    )
    share = await client.get("1")
    assert share.has_password
    assert share.share_with is None
    assert "argon2" not in repr(share)
    assert (share.kind, share.path, share.expiration) == ("link", "/Taxes", "2027-01-15")


@http_mock.mock
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"expire_date": "2020-01-01"}, "after today"),
        ({"expire_date": "next friday"}, "a date like"),
        ({"password": "x" * 201}, "printable characters"),
        ({"password": "a\x00b"}, "printable characters"),
    ],
)
async def test_refused_link_input_sends_nothing(
    client: SharesClient, kwargs: dict[str, str], message: str
) -> None:
    route = http_mock.post(SHARES)
    with pytest.raises(InvalidInput, match=message):
        await client.create("/Taxes", "link", permissions=1, **kwargs)
    assert not route.called


@http_mock.mock
@pytest.mark.parametrize("path", ["", "/", "../etc", "a/../../b", "https://evil.example/x"])
async def test_paths_outside_the_users_files_or_the_root_are_refused(client: SharesClient, path: str) -> None:
    route = http_mock.post(SHARES)
    with pytest.raises(InvalidInput):
        await client.create(path, "link", permissions=1)
    assert not route.called
