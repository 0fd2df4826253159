"""Limits that fit each protocol era, in front of `/mcp` (docs/ADR/0054-limits-per-protocol-era.md).

A handshake-era client (up to 2025-11-25) opens a session with `initialize` and sends every later
request inside it: its POSTs without `Mcp-Session-Id` open sessions, which `sessions.SessionLimiter`
budgets. A client of the stateless 2026-07-28 protocol opens no session at all: every request
stands alone and names its protocol in the `MCP-Protocol-Version` header - the same header the
SDK routes eras by. Counting those requests as session opens throttled such a client after ten
calls (issue 39), so they are limited as what they are, calls:

- a rate per user (`MCP_STATELESS_CALLS_PER_MINUTE`, after a burst of a tenth of it), a token
  bucket like the session opens', so a flood from one user costs an early 429 each;
- calls in flight per user (`MCP_STATELESS_CALLS_IN_FLIGHT_PER_USER`), which bounds the memory
  one user's slow calls can hold, as the per-user session cap does for sessions.

The user is the same as for sessions (`sessions.owner_of`). Counters live in each replica.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from nextcloud_mcp_server.web.sessions import owner_of

__all__ = ["ByProtocolEra", "StatelessCallLimiter", "TokenBuckets", "is_stateless"]

logger = logging.getLogger(__name__)

_VERSION_HEADER = b"mcp-protocol-version"


def is_stateless(scope: Scope) -> bool:
    """True for a request of a stateless era (2026-07-28 on): it names a protocol version that has
    no initialize handshake. The SDK's session manager routes on the same header."""
    for name, value in scope.get("headers", ()):
        if name == _VERSION_HEADER:
            return value.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
    return False


class TokenBuckets:
    """A token bucket per key: `burst` at once, then `per_minute` refilled evenly."""

    MAX_KEYS = 10_000  # beyond this, keys whose bucket is full again are forgotten

    def __init__(self, per_minute: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = max(1.0, burst)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when counted)

    def take(self, key: str) -> bool:
        now = self.clock()
        if len(self._buckets) > self.MAX_KEYS:
            self._buckets = {
                k: b for k, b in self._buckets.items() if b[0] + (now - b[1]) * self.rate < self.burst
            }
        tokens, then = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        return True

    def seconds_to_next(self, key: str) -> float:
        """How long until `key` may take again (0 when it may now)."""
        tokens, then = self._buckets.get(key, (self.burst, self.clock()))
        missing = 1.0 - min(self.burst, tokens + (self.clock() - then) * self.rate)
        return max(0.0, missing / self.rate) if self.rate > 0 else 60.0


def _refusal(message: str, retry_after: int) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return JSONResponse(body, status_code=429, headers={"Retry-After": str(retry_after)})


class StatelessCallLimiter:
    """ASGI wrapper: per-user rate and concurrency of requests that belong to no session."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        per_minute: int,
        in_flight: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.per_minute = per_minute
        self.in_flight = in_flight
        self.buckets = TokenBuckets(per_minute, burst=max(in_flight, per_minute / 10), clock=clock)
        self._running: dict[str, int] = {}

    def running(self, owner: str) -> int:
        """Calls of `owner` being served now (for tests)."""
        return self._running.get(owner, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        owner = owner_of(scope)
        if self._running.get(owner, 0) >= self.in_flight:
            logger.warning("refused a call: %d calls of one user are in flight", self.in_flight)
            message = (
                f"Too many calls of this user at once: at most {self.in_flight} "
                "(MCP_STATELESS_CALLS_IN_FLIGHT_PER_USER). Wait for one to finish."
            )
            await _refusal(message, 1)(scope, receive, send)
            return
        if not self.buckets.take(owner):
            message = (
                f"Too many calls from this user: at most {self.per_minute} a minute "
                "(MCP_STATELESS_CALLS_PER_MINUTE) after a first burst."
            )
            retry = max(1, round(self.buckets.seconds_to_next(owner) + 0.5))
            await _refusal(message, retry)(scope, receive, send)
            return
        self._running[owner] = self._running.get(owner, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self._running[owner] - 1
            if left:
                self._running[owner] = left
            else:
                del self._running[owner]


class ByProtocolEra:
    """Requests of a stateless era to `stateless`, everything else (sessions) to `sessions`."""

    def __init__(self, *, sessions: ASGIApp, stateless: ASGIApp) -> None:
        self.sessions = sessions
        self.stateless = stateless

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_stateless(scope):
            await self.stateless(scope, receive, send)
        else:
            await self.sessions(scope, receive, send)
