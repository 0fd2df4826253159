"""The one way app clients ask an app's API and read its refusals (`nextcloud/app_api.py`).

The apps' own tests (tests/toolsets/<app>) drive these rules against the double and the real
apps; here each rule on its own, with a stand-in transport that answers what a test gives it."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from pydantic import TypeAdapter

from nextcloud_mcp_server.nextcloud.app_api import AppAPI, words_in
from nextcloud_mcp_server.nextcloud.errors import (
    Conflict,
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
    RateLimited,
    Unauthorized,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.outbound.answers import Answer

HOST = "cloud.example"
MISSING = "Things is not installed or not enabled for you on this Nextcloud"


class _Transport:
    """Answers every request with `status` and `body`; records what was asked."""

    host = HOST

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body if isinstance(body, str) else json.dumps(body)
        self.asked: list[dict[str, Any]] = []

    async def request(self, method: str, path: str, **kwargs: Any) -> Answer:
        self.asked.append({"method": method, "path": path, **kwargs})
        if self.status >= 400:
            raise error_for_status(HOST, self.status, self.body)
        return Answer(self.status, {"content-type": "application/json"}, self.body.encode(), path)


def _api(status: int, body: Any, **kwargs: Any) -> tuple[AppAPI, _Transport]:
    transport = _Transport(status, body)
    api = AppAPI(
        cast(NextcloudHTTP, transport), None, "/apps/things/api", app="Things", missing=MISSING, **kwargs
    )
    return api, transport


@pytest.mark.parametrize(
    ("body", "places", "said"),
    [
        ('{"message": "Feed not found"}', (("message",),), "Feed not found"),
        ('{"status": "error", "data": ["Not found"]}', (("data", 0),), "Not found"),
        ('{"data": []}', (("data", 0),), ""),
        ('{"data": [7]}', (("data", 0),), ""),
        ('"a bare sentence"', (("msg",), ()), "a bare sentence"),
        ('{"msg": ""}', (("msg",), ()), ""),
        (
            '{"ocs": {"meta": {"message": ""}}, "error": "Poll not found"}',
            (("ocs", "meta", "message"), ("error",)),
            "Poll not found",
        ),
        ('{"message": ' + json.dumps("x" * 1000) + "}", (("message",),), "x" * 300),
        ("<html>Not Found</html>", (("message",),), ""),
        ("[" * 5000 + "]" * 5000, (("message",),), ""),
        ('{"message": {"nested": "no"}}', (("message",),), ""),
    ],
)
def test_the_apps_own_words_are_found_where_it_puts_them_and_cut(body: str, places: Any, said: str) -> None:
    assert words_in(body, places) == said


async def test_a_request_goes_under_the_base_with_the_apps_headers_and_params() -> None:
    api, transport = _api(200, {"ok": 1}, headers={"OCS-APIRequest": "true"}, params={"format": "json"})
    assert await api.call("POST", "/things", "the things", params={"page": 2}, body={"a": 1}) == {"ok": 1}
    asked = transport.asked[0]
    assert (asked["method"], asked["path"], asked["json"]) == ("POST", "/apps/things/api/things", {"a": 1})
    assert asked["headers"] == {"OCS-APIRequest": "true"}
    assert list(asked["params"]) == [("format", "json"), ("page", 2)]


async def test_the_apps_words_become_its_refusal_with_the_statuss_own_type() -> None:
    api, _ = _api(409, {"message": "a thing of that name exists"})
    with pytest.raises(Conflict) as raised:
        await api.call("POST", "/things", "the thing")
    assert raised.value.message == "Things refused: a thing of that name exists"


async def test_a_404_without_the_apps_words_means_the_app_is_missing() -> None:
    api, _ = _api(404, "<html>Page not found</html>")
    with pytest.raises(NotFound) as raised:
        await api.call("GET", "/things/7", "thing 7")
    assert raised.value.message == MISSING


@pytest.mark.parametrize(
    ("status", "kind"), [(401, Unauthorized), (429, RateLimited), (500, NextcloudHTTPError)]
)
async def test_nextclouds_own_error_stays_for_401_429_and_when_the_app_said_nothing(
    status: int, kind: type[NextcloudHTTPError]
) -> None:
    body = {"message": "slow down"} if status != 500 else "{}"
    api, _ = _api(status, body)
    with pytest.raises(kind) as raised:
        await api.call("GET", "/things", "the things")
    assert "Things refused" not in raised.value.message
    assert raised.value.status == status


async def test_the_apps_special_case_comes_first() -> None:
    def special(exc: NextcloudHTTPError, said: str, what: str) -> NextcloudError | None:
        return NotFound(exc.host, f"{what} does not exist", status=404) if said == "Not found" else None

    api, _ = _api(404, {"message": "Not found"}, special=special)
    with pytest.raises(NotFound, match="thing 7 does not exist"):
        await api.call("GET", "/things/7", "thing 7")
    other, _ = _api(400, {"message": "a title is needed"}, special=special)
    with pytest.raises(NextcloudHTTPError, match="Things refused: a title is needed"):
        await other.call("POST", "/things", "the thing")


def test_envelopes_and_shapes_are_read_or_refused_naming_the_app_and_the_thing() -> None:
    api, _ = _api(200, {})
    assert api.ocs_data({"ocs": {"meta": {}, "data": [1]}}, "the things") == [1]
    with pytest.raises(InvalidResponse, match="Things answered the things without ocs.data"):
        api.ocs_data({"data": [1]}, "the things")
    assert api.succeeded({"status": "success", "item": 1}, "thing 1") == {"status": "success", "item": 1}
    with pytest.raises(InvalidResponse, match="Things did not answer thing 1 with success"):
        api.succeeded({"status": "error"}, "thing 1")
    assert api.parse(TypeAdapter(list[int]), [1, 2], "the ids") == [1, 2]
    with pytest.raises(InvalidResponse, match="Things answered the ids in an unknown shape"):
        api.parse(TypeAdapter(list[int]), ["x"], "the ids")
