"""One plain JSON body instead of an SSE stream for requests that cannot need the stream
(docs/ADR/0027-plain-json-answers.md).

Over streamable HTTP the SDK answers each POST with an SSE stream, so that a tool can send the
client requests (elicitation: our approvals) and notifications tied to its call before its result.
That stream costs the server about 1.6 ms of CPU per call (sse-starlette runs five tasks per
response), a third of the SDK's own cost of a call. Only tools that ask the human use it, and
only tools that change something ask: a call of a read-only tool, `tools/list` and `ping` are
answered with one JSON body, by the SDK transport's own JSON-response mode chosen per request,
unless the call carries a `progressToken` (its progress notifications need the stream).

- `PlainAnswers` (ASGI, innermost around `/mcp`) reads a small POST body (it is replayed to the
  SDK unchanged), decides, and marks the request in a context variable.
- `PlainAnswerSessions` is the SDK's session manager making `_Transport`s: the SDK's transport
  whose `is_json_response_enabled` is that variable. The session's own tasks (the message router)
  never see it set. A request answered in JSON gets a stream that passes only its response:
  anything else tied to it has no place in a JSON body (the SDK's JSON mode drops it as well).

Private parts of the SDK used here (pinned by the `mcp` version and by tests/test_plain_answers.py):
`StreamableHTTPSessionManager._admit_session`, `StreamableHTTPServerTransport._request_streams`.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import Any
from uuid import uuid4

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import EventMessage, StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import JSONRPCError, JSONRPCResponse
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nextcloud_mcp_server.numbers import ascii_number

__all__ = ["MAX_PLAIN_BODY", "PlainAnswerSessions", "PlainAnswers", "plain_answer_wanted"]

logger = logging.getLogger(__name__)

# Bodies of read-only calls are small; a bigger one (content to write) is passed on unread.
MAX_PLAIN_BODY = 64 * 1024
_PLAIN_METHODS = frozenset({"tools/list", "ping"})

_answer_plain: contextvars.ContextVar[bool] = contextvars.ContextVar("answer_plain", default=False)


def plain_answer_wanted(body: bytes, read_only_tools: Collection[str]) -> bool:
    """True for one JSON-RPC request that needs no stream: a read-only tool's call without a
    progress token, a tool list or a ping (never `initialize`, notifications or batches: those
    keep the SDK's own answer)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or "id" not in message:
        return False
    method, params = message.get("method"), message.get("params")
    if not isinstance(method, str):
        return False
    if method in _PLAIN_METHODS:
        return True
    name = params.get("name") if isinstance(params, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get("progressToken") is not None:
        return False  # the caller wants progress notifications: they need the stream
    return method == "tools/call" and isinstance(name, str) and name in read_only_tools


class PlainAnswers:
    """ASGI wrapper around the SDK's `/mcp` app: marks requests to answer with one JSON body."""

    def __init__(self, app: ASGIApp, read_only_tools: Collection[str]) -> None:
        self.app = app
        self.read_only_tools = frozenset(read_only_tools)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        length = ascii_number(request.headers.get("content-length"))
        has_json, _ = check_accept_headers(request)
        if not (has_json and length is not None and length <= MAX_PLAIN_BODY):
            await self.app(scope, receive, send)
            return
        body, replay = await _buffer(receive)
        token = _answer_plain.set(plain_answer_wanted(body, self.read_only_tools))
        try:
            await self.app(scope, replay, send)
        finally:
            _answer_plain.reset(token)


async def _buffer(receive: Receive) -> tuple[bytes, Receive]:
    """The body (its Content-Length is at most MAX_PLAIN_BODY) and a receive that replays it."""
    chunks: list[bytes] = []
    pending: list[Message] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            pending.append(message)  # a disconnect: replayed after the body
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if not message.get("more_body") or size > MAX_PLAIN_BODY:
            break
    body = b"".join(chunks)
    more = size > MAX_PLAIN_BODY and not pending
    pending.insert(0, {"type": "http.request", "body": body, "more_body": more})

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return (b"" if more else body), replay


class _ResponseOnly:
    """The send side of a JSON-answered request's stream: only its response goes through."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def send(self, item: EventMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            await self._stream.send(item)
        else:
            logger.debug("dropped a message tied to a request answered with one JSON body")

    async def aclose(self) -> None:
        await self._stream.aclose()


class _RequestStreams(dict[Any, Any]):
    def __setitem__(self, key: Any, pair: Any) -> None:
        if _answer_plain.get():
            pair = (_ResponseOnly(pair[0]), pair[1])
        super().__setitem__(key, pair)


class _Transport(StreamableHTTPServerTransport):
    """The SDK's transport, answering in JSON exactly the requests `PlainAnswers` marked."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_streams = _RequestStreams()

    @property
    def is_json_response_enabled(self) -> bool:
        return _answer_plain.get()

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        """Set by the SDK's constructor; the answer is chosen per request instead."""

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        # Runs in the session's own task, whose context the message router inherits: cleared here
        # whatever the request that opened the session was.
        _answer_plain.set(False)
        async with super().connect() as streams:
            yield streams


class PlainAnswerSessions(StreamableHTTPSessionManager):
    """The SDK's stateful session manager, with transports that answer per request."""

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        transport = _Transport(
            mcp_session_id=uuid4().hex,
            is_json_response_enabled=False,
            event_store=self.event_store,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        logger.debug("opened MCP session %s", session_id)
        return transport
