"""Session ids a load balancer can route by: `<REPLICA_ID>-<the SDK's id>`.

The SDK makes session ids itself (random hex), so nothing in an id says which replica holds the
session. This ASGI wrapper around `/mcp` prefixes the id in responses and strips the prefix from
requests, so the balancer can send a request to the replica its `Mcp-Session-Id` names (nginx: a
`map` on the header, `deploy/nginx/`). Only the HTTP header changes; the SDK never sees the prefix.

A request whose id carries another replica's prefix (the balancer sent it elsewhere, e.g. because
that replica is down) is passed on unchanged: the SDK answers 404 and the client starts a new
session, as the protocol says it should.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ReplicaSessionIds"]

HEADER = b"mcp-session-id"


class ReplicaSessionIds:
    def __init__(self, app: ASGIApp, replica_id: str) -> None:
        self.app = app
        self.prefix = f"{replica_id}-".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = []
        for name, value in scope["headers"]:
            if name == HEADER and value.startswith(self.prefix):
                value = value[len(self.prefix) :]
            headers.append((name, value))
        scope = {**scope, "headers": headers}

        async def send_prefixed(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (name, self.prefix + value if name.lower() == HEADER else value)
                        for name, value in message.get("headers", [])
                    ],
                }
            await send(message)

        await self.app(scope, receive, send_prefixed)
