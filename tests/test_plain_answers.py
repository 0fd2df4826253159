"""Requests that cannot need a stream get one plain JSON body; tools that may ask the human keep
the SDK's SSE stream (docs/ADR/0027-plain-json-answers.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.streamable_http import EventMessage
from mcp.types import JSONRPCNotification, JSONRPCResponse

from nextcloud_mcp_server.web import plain_answers
from nextcloud_mcp_server.web.plain_answers import MAX_PLAIN_BODY, plain_answer_wanted
from tests.backends import Nextcloud
from tests.mcp_clients import INITIALIZE, MCP_HEADERS, running_app

READ_ONLY = {"nc_notes_list_notes"}


def _call(name: str, **extra: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, **extra}}
    ).encode()


@pytest.mark.parametrize(
    ("body", "plain"),
    [
        (_call("nc_notes_list_notes"), True),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', True),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', True),
        (_call("nc_notes_delete_note"), False),  # may ask the human: needs the stream
        (_call("nc_notes_list_notes", _meta={"progressToken": 3}), False),  # progress needs it too
        (_call("nc_notes_list_notes", _meta={"progressToken": None}), True),
        (_call("no_such_tool"), False),
        (json.dumps(INITIALIZE).encode(), False),
        (b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', False),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', False),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "nc_notes_list_notes"}', False),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": ["x"]}}', False),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ["ping"]}', False),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
            b'"params": {"name": "nc_notes_list_notes", "_meta": {"progressToken": 7}}}',
            False,
        ),
        (b"{not json", False),
        (b"[" * 100_000, False),
    ],
    ids=[
        "read-only",
        "list",
        "ping",
        "destructive",
        "progress",
        "no-progress-token",
        "unknown",
        "initialize",
        "notification",
        "batch",
        "bad-params",
        "list-name",
        "list-method",
        "progress-token",
        "malformed",
        "deep",
    ],
)
def test_which_requests_are_answered_plainly(body: bytes, plain: bool) -> None:
    assert plain_answer_wanted(body, READ_ONLY) is plain


async def test_a_plain_request_stream_passes_only_its_response() -> None:
    """Anything else tied to the request (a progress or log notification) has no place in a JSON
    body; it must not be taken for the answer."""
    streams = plain_answers._RequestStreams()
    token = plain_answers._answer_plain.set(True)
    try:
        streams["7"] = anyio.create_memory_object_stream[EventMessage](4)
    finally:
        plain_answers._answer_plain.reset(token)
    streams["8"] = anyio.create_memory_object_stream[EventMessage](4)  # a streamed request
    note = JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"progress": 1})
    answer = JSONRPCResponse(jsonrpc="2.0", id=7, result={})
    for key in ("7", "8"):
        await streams[key][0].send(EventMessage(note))
        await streams[key][0].send(EventMessage(answer))
    assert (await streams["7"][1].receive()).message == answer
    assert (await streams["8"][1].receive()).message == note
    for send, receive in streams.values():
        await send.aclose()
        await receive.aclose()


@contextmanager
def _session(nextcloud: Nextcloud) -> Iterator[tuple[httpx.Client, str, dict[str, str]]]:
    with running_app(nextcloud.settings()) as base, httpx.Client(timeout=30) as http:
        opened = http.post(f"{base}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert opened.status_code == 200, opened.text
        headers = {
            **MCP_HEADERS,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(f"{base}/mcp", json=done, headers=headers).status_code == 202
        yield http, f"{base}/mcp", headers


def _sse_result(answer: httpx.Response) -> dict[str, Any]:
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    message: dict[str, Any] = json.loads(data[-1])
    return message


@pytest.mark.integration
def test_a_read_only_call_is_one_json_body_and_a_destructive_one_a_stream(nextcloud: Nextcloud) -> None:
    note = nextcloud.add_note(title="Plain", content="answered in one body")
    with _session(nextcloud) as (http, url, headers):
        listed = http.post(url, content=_call("nc_notes_list_notes", arguments={}), headers=headers)
        assert listed.status_code == 200
        assert listed.headers["content-type"] == "application/json"
        result = listed.json()["result"]
        assert note["id"] in [n["id"] for n in result["structuredContent"]["notes"]]
        assert not result.get("isError")

        tools = http.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers)
        assert tools.headers["content-type"] == "application/json"
        assert "nc_notes_delete_note" in [t["name"] for t in tools.json()["result"]["tools"]]

        # This client declared no elicitation: the delete is refused, over the SSE stream.
        delete = _call("nc_notes_delete_note", arguments={"note_id": note["id"]})
        refused = http.post(url, content=delete, headers=headers)
        assert refused.headers["content-type"].startswith("text/event-stream")
        assert _sse_result(refused)["result"]["isError"] is True

        # A read-only call with a body too big to look at is passed on to the SDK as it is.
        padded = _call("nc_notes_list_notes", arguments={}, _meta={"pad": "x" * MAX_PLAIN_BODY})
        streamed = http.post(url, content=padded, headers=headers)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert note["id"] in [n["id"] for n in _sse_result(streamed)["result"]["structuredContent"]["notes"]]
    assert note["id"] in [n["id"] for n in nextcloud.notes()]
