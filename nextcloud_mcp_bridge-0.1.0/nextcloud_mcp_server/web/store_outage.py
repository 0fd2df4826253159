"""A store that cannot be reached answers 503 with Retry-After, never 500 (docs/ADR/0056).

Every route may read the store: the check of this server's own access tokens (revoked?), the
consent and sign-in pages, the authorization server's endpoints. When PostgreSQL restarts or is
down, the pool retries what a retry can save (`storage/pg_pool.py`); what is left raises
`StoreUnavailable`, which this outermost wrapper answers as what it is - a temporary outage the
client (or balancer) should retry - if nothing was sent yet. Inside an MCP call the SDK turns it
into an error result with the same words.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nextcloud_mcp_server.storage.records import StoreUnavailable

__all__ = ["StoreOutage"]

logger = logging.getLogger(__name__)


class StoreOutage:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except StoreUnavailable as exc:
            if started:
                raise
            logger.warning("answered 503: %s", exc)
            body = {"error": "temporarily_unavailable", "error_description": str(exc)}
            headers = {"Retry-After": str(exc.retry_after)}
            await JSONResponse(body, status_code=503, headers=headers)(scope, receive, send)
