"""Per-user limits on open MCP sessions, in front of the SDK's session manager.

The SDK caps sessions only for the whole server (first come, first served), so one caller could
take every slot and lock everyone else out until the idle timeout. `SessionLimiter` counts the
sessions each user opened (the OAuth subject; in single-user mode the client's address) and, when
a user opens one more than MCP_MAX_SESSIONS_PER_USER allows, ends that user's session that was
idle longest (no request in flight, no open stream) - a client that crashed or forgot to close its
sessions recovers by itself. When every one of them is busy, the new session is refused with 429
and a message that names the setting. The global cap (MCP_MAX_SESSIONS) refuses with 503 and says
so. See docs/ADR/0020-limits-at-the-front.md.

The session manager keeps its sessions in private attributes; `_open_sessions` and `_end_session`
are the only two places that touch them (pinned by the `mcp` version and by tests/test_front.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nextcloud_mcp_server.auth.caller import caller_from_scope
from nextcloud_mcp_server.inbound.client_address import client_bucket

__all__ = ["SessionLimiter", "owner_of"]

logger = logging.getLogger(__name__)


@dataclass
class _Session:
    owner: str
    last_active: float
    in_flight: int = 0


def owner_of(scope: Scope) -> str:
    """Whose session this is: the token's issuer and subject, else the client's address."""
    caller = caller_from_scope(scope)
    if caller is not None:
        return f"sub:{caller.issuer} {caller.subject}"
    return f"addr:{client_bucket(scope)}"


def _open_sessions(manager: StreamableHTTPSessionManager) -> dict[str, Any]:
    return manager._server_instances


async def _end_session(manager: StreamableHTTPSessionManager, session_id: str) -> None:
    transport = _open_sessions(manager).get(session_id)
    if transport is not None:
        await manager._discard_session(session_id, transport)


def _refusal(status: int, message: str, retry_after: int | None = None) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return JSONResponse(body, status_code=status, headers=headers)


class SessionLimiter:
    """ASGI wrapper around the `/mcp` endpoint enforcing per-user and global session caps."""

    def __init__(
        self,
        app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        *,
        per_user: int,
        total: int,
        opens_per_minute: int = 60,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.manager = manager
        self.per_user = per_user
        self.total = total
        self.opens_per_minute = opens_per_minute
        self.clock = clock
        # owner -> (tokens, when counted): a burst of `per_user` opens, then opens_per_minute.
        self._buckets: dict[str, tuple[float, float]] = {}
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}  # owner -> sessions being opened right now

    def sessions_of(self, owner: str) -> int:
        """Open sessions of `owner` (for tests and the bench)."""
        self._prune()
        return sum(1 for s in self._sessions.values() if s.owner == owner)

    def _prune(self) -> None:
        """Forget sessions the manager ended (client DELETE, idle timeout, crash)."""
        alive = _open_sessions(self.manager)
        for session_id in [sid for sid in self._sessions if sid not in alive]:
            del self._sessions[session_id]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            await self._existing(session_id, scope, receive, send)
        elif scope["method"] == "POST":
            await self._opening_request(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _existing(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            await self.app(scope, receive, send)
            return
        session.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_active = self.clock()

    def _take_token(self, owner: str) -> bool:
        """Rate of new sessions per user: refusing early is cheap, opening a session is not."""
        now, burst, rate = self.clock(), float(self.per_user), self.opens_per_minute / 60.0
        if len(self._buckets) > 10_000:  # forget users whose budget is full again
            self._buckets = {o: b for o, b in self._buckets.items() if b[0] + (now - b[1]) * rate < burst}
        tokens, then = self._buckets.get(owner, (burst, now))
        tokens = min(burst, tokens + (now - then) * rate)
        if tokens < 1.0:
            self._buckets[owner] = (tokens, now)
            return False
        self._buckets[owner] = (tokens - 1.0, now)
        return True

    async def _opening_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        owner = owner_of(scope)
        if not self._take_token(owner):
            message = (
                f"Too many new sessions from this user: at most {self.opens_per_minute} a minute "
                "(MCP_SESSION_OPENS_PER_MINUTE) after a first burst. Reuse the session you have."
            )
            await _refusal(429, message, retry_after=max(1, round(60 / self.opens_per_minute)))(
                scope, receive, send
            )
            return
        self._prune()
        refusal = await self._make_room(owner)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        self._opening[owner] = self._opening.get(owner, 0) + 1
        opened: list[_Session] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if session_id and session_id not in self._sessions:
                    session = _Session(owner, self.clock(), in_flight=1)
                    self._sessions[session_id] = session
                    opened.append(session)
                    self._opening[owner] -= 1
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if opened:
                opened[0].in_flight -= 1
                opened[0].last_active = self.clock()
            else:
                self._opening[owner] -= 1
            if not self._opening.get(owner):
                self._opening.pop(owner, None)

    async def _make_room(self, owner: str) -> JSONResponse | None:
        """None when `owner` may open a session (after ending their longest-idle one if needed)."""
        mine = {sid: s for sid, s in self._sessions.items() if s.owner == owner}
        if len(mine) + self._opening.get(owner, 0) >= self.per_user:
            idle = [(s.last_active, sid) for sid, s in mine.items() if s.in_flight == 0]
            if not idle:
                logger.warning("refused a new MCP session: %d sessions of one user are busy", len(mine))
                return _refusal(
                    429,
                    f"Too many open sessions for this user: at most {self.per_user} "
                    "(MCP_MAX_SESSIONS_PER_USER), and all are in use. Close a session (HTTP DELETE) "
                    "or wait for one to finish.",
                    retry_after=5,
                )
            _, oldest = min(idle)
            del self._sessions[oldest]
            await _end_session(self.manager, oldest)
            logger.info("ended the longest-idle MCP session of a user at the per-user limit")
        if len(_open_sessions(self.manager)) >= self.total:
            logger.warning("refused a new MCP session: %d sessions are open", self.total)
            return _refusal(
                503,
                f"The server has the most open sessions it allows ({self.total}, MCP_MAX_SESSIONS). "
                "Try again later.",
                retry_after=30,
            )
        return None
