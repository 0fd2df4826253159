"""The OCS envelope as any answer may bend it: a meta that is no object, a status code that is a
word, a float, null or 400 digits, an integer past int()'s 4,300 digits anywhere in the body.
Each is InvalidResponse (a readable error), where it raised AttributeError, ValueError,
TypeError or OverflowError from the status, notifications, Talk, sharing and every OCS call."""

from __future__ import annotations

from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import json_body
from nextcloud_mcp_server.nextcloud.ocs import ocs_envelope, ocs_status
from nextcloud_mcp_server.outbound.answers import Answer

HOST = "cloud.example"


def _answer(body: str, status: int = 200) -> Answer:
    return Answer(status, {"content-type": "application/json"}, body.encode(), f"https://{HOST}/ocs")


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"statuscode": 200}, 200),
        ({"statuscode": 100}, 100),
        ({"statuscode": "404"}, 404),
        ({}, 207),
        ({"statuscode": None}, 207),
        ({"statuscode": 0}, 207),
        ({"statuscode": ""}, 207),
        ({"statuscode": "ok"}, None),
        ({"statuscode": 1e400}, None),  # int() of it raised OverflowError
        ({"statuscode": 200.5}, None),
        ({"statuscode": True}, None),
        ({"statuscode": [200]}, None),
        ({"statuscode": "²00"}, None),
        ([], None),  # meta.get raised AttributeError
        ("200", None),
    ],
)
def test_a_status_code_is_a_whole_number_or_the_fallback_or_none(meta: Any, expected: int | None) -> None:
    assert ocs_status(meta, 207) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {"ocs": {"meta": [], "data": {}}},
        {"ocs": {"meta": {"statuscode": "ok"}, "data": {}}},
        {"ocs": {"meta": {"statuscode": float("inf")}, "data": {}}},
        {"ocs": {"meta": {"statuscode": 200}}},
        {"ocs": []},
        {"ocs": "text"},
        [1, 2],
        None,
    ],
)
def test_an_envelope_that_is_not_one_is_invalid_response(payload: Any) -> None:
    with pytest.raises(InvalidResponse):
        ocs_envelope(payload, HOST, 200)


def test_an_envelope_names_its_code_message_and_data() -> None:
    payload = {"ocs": {"meta": {"statuscode": 404, "message": "no such share"}, "data": []}}
    assert ocs_envelope(payload, HOST, 200) == (404, "no such share", [])
    assert ocs_envelope({"ocs": {"meta": {}, "data": 1}}, HOST, 201) == (201, "", 1)


def test_an_integer_past_int_s_digit_limit_is_no_json() -> None:
    with pytest.raises(InvalidResponse):  # raised ValueError before: not JSONDecodeError
        json_body(_answer('[{"id": ' + "1" * 5000 + "}]"), HOST)
