"""Answers of Nextcloud's apps with a value of the wrong kind where a number or an object belongs.
Each raised TypeError, ValueError, AttributeError or OverflowError past the client before, which a
tool reports as an internal error with no reason; now each is a readable InvalidResponse, or the
odd value is read as unknown and the rest of the answer is shown. Found by a review of hostile
answers; the faked HTTP answers are tests/http_mock.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient
from nextcloud_mcp_server.toolsets.files.tools_common import decode_page
from nextcloud_mcp_server.toolsets.polls.client import PollsClient
from nextcloud_mcp_server.toolsets.search.client import UnifiedSearchClient
from nextcloud_mcp_server.toolsets.sharing.client import _share
from nextcloud_mcp_server.toolsets.tables.values import TableColumn, shown_value
from nextcloud_mcp_server.toolsets.talk.client import _int_state
from nextcloud_mcp_server.toolsets.talk.models import message_of
from tests import http_mock

BASE = "https://cloud.example.com"
CREDENTIAL = BasicCredential("alice", "pw")


def _ocs(data: Any, status: int = 200) -> dict[str, Any]:
    return {"ocs": {"meta": {"statuscode": status, "status": "ok"}, "data": data}}


def _answer(status: int = 200, body: Any = None, text: str | None = None) -> http_mock.Response:
    headers = {"content-type": "application/json"}
    if text is not None:
        return http_mock.Response(status, text=text, headers=headers)
    return http_mock.Response(status, json=body, headers=headers)


@asynccontextmanager
async def _http() -> AsyncIterator[NextcloudHTTP]:
    http = NextcloudHTTP(BASE, max_retries=0)
    try:
        yield http
    finally:
        await http.aclose()


def test_a_share_with_an_odd_type_or_permissions_is_read_as_unknown() -> None:
    odd = _share({"id": 7, "share_type": None, "permissions": "rw", "path": "/a"}, BASE)
    assert (odd.kind, odd.permissions) == ("other", 0)
    assert _share({"id": 8, "share_type": 0, "permissions": 1}, BASE).kind == "user"
    assert _share({"id": 9, "share_type": "3", "permissions": 1e400}, BASE).kind == "link"


@pytest.mark.parametrize("message_id", [1e400, 1.5, "x", None, True])
def test_a_talk_message_without_a_whole_number_id_is_refused_as_talk_s_fault(message_id: Any) -> None:
    with pytest.raises(ValueError, match="no whole number"):  # the client makes it InvalidResponse
        message_of({"id": message_id, "message": "hi"})
    assert message_of({"id": "12", "message": "hi"}).id == 12


def test_a_talk_bot_state_that_is_no_whole_number_counts_as_enabled() -> None:
    assert [_int_state(v) for v in (1e999, "on", None, 0, "2")] == [1, 1, 1, 0, 2]


def test_a_tables_user_cell_with_an_odd_type_is_a_user() -> None:
    people = TableColumn(id=1, title="Who", type="usergroup")
    cell = [{"id": "bob", "type": {}}, {"id": "ops", "type": 1}, {"id": "t", "type": "2"}]
    assert shown_value(people, cell, 100) == (["bob", "group:ops", "team:t"], False)


@pytest.mark.parametrize("order", ["first", [1], 1e400])
@http_mock.mock
async def test_a_search_provider_with_an_odd_order_is_listed(order: Any) -> None:
    answer = _ocs([{"id": "files", "name": "Files", "order": order}, {"id": "mail", "order": 3}])
    http_mock.get(f"{BASE}/ocs/v2.php/search/providers").mock(return_value=_answer(body=answer))
    async with _http() as http:
        providers = await UnifiedSearchClient(OCSClient(http, CREDENTIAL), http.host).providers()
    assert {p.id: p.order for p in providers} == {"files": 0, "mail": 3}


@http_mock.mock
async def test_a_polls_answer_whose_ocs_is_a_list_is_invalid() -> None:
    capabilities = _answer(body=_ocs({"capabilities": {"polls": {}}}))
    http_mock.get(f"{BASE}/ocs/v2.php/cloud/capabilities").mock(return_value=capabilities)
    http_mock.get(f"{BASE}/ocs/v2.php/apps/polls/api/v1.0/polls").mock(return_value=_answer(body={"ocs": []}))
    async with _http() as http:
        with pytest.raises(InvalidResponse):
            await PollsClient(http, CREDENTIAL, OCSClient(http, CREDENTIAL)).polls()


PAGES = f"{BASE}/ocs/v2.php/apps/collectives/api/v1.0/collectives/1/pages"


@pytest.mark.parametrize(
    "refusal",
    [
        lambda: _answer(404, body={"ocs": {"meta": [], "data": []}}),
        lambda: _answer(404, text='{"ocs": {"meta": {"statuscode": 1e400}, "data": []}}'),
    ],
    ids=["meta-list", "status-infinite"],
)
@http_mock.mock
async def test_a_collectives_refusal_in_an_odd_envelope_is_still_a_refusal(
    refusal: Callable[[], http_mock.Response],
) -> None:
    http_mock.get(PAGES).mock(return_value=refusal())
    http_mock.get(f"{BASE}/ocs/v2.php/core/navigation/apps").mock(return_value=_answer(body=_ocs(7)))
    async with _http() as http:
        client = CollectivesClient(OCSClient(http, CREDENTIAL), WebDAVClient(http, CREDENTIAL, "alice"))
        with pytest.raises(NextcloudError):
            await client.pages(1)


@pytest.mark.parametrize("charset", ["x-unknown", "zlib", "base64", "rot13"])
def test_a_charset_that_is_no_text_encoding_reads_as_no_text(charset: str) -> None:
    """An unknown name raised LookupError outside the guard; zlib "decoded" a few KB to 10 MB of
    bytes, which the text answer then choked on."""
    assert decode_page(b"x\x9c\xcbH\xcd\xc9\xc9\x07\x00\x06,\x02\x15", charset, True) is None
    assert decode_page("café".encode(), "utf-8", True) == ("café", 0, 5)
