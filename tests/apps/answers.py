"""Answers of Nextcloud's apps written by hand for the request-count tests (the recorded ones are
in `tests.apps.replayed`): an OCS envelope, and a poll and its options as Polls 9.2 and 7.5
answer their creation."""

from __future__ import annotations

from typing import Any

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from tests import http_mock
from tests.apps.replayed import BASE

__all__ = ["ALICE", "BASE", "POLLS", "ocs", "option", "poll"]

ALICE = BasicCredential("alice", "pw")
POLLS = f"{BASE}/ocs/v2.php/apps/polls/api/v1.0"


def ocs(data: Any) -> http_mock.Response:
    return http_mock.Response(200, json={"ocs": {"meta": {"status": "ok", "statuscode": 200}, "data": data}})


def poll(poll_id: int = 7) -> dict[str, Any]:
    config = {"title": "Lunch", "description": ""}
    return {"id": poll_id, "configuration": config, "owner": {"userId": "alice"}, "status": {"created": 1}}


def option(option_id: int, text: str) -> dict[str, Any]:
    return {
        "id": option_id,
        "pollId": 7,
        "text": text,
        "order": option_id,
        "votes": {"yes": 0, "no": 0, "maybe": 0},
    }
