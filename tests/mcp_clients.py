"""Real MCP clients for the tests: the SDK's `ClientSession` over stdio and streamable HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config import Settings
from tests.backends import Nextcloud
from tests.nextcloud_double.server import serve_in_thread
from tests.tls import httpx2_verify

__all__ = [
    "INITIALIZE",
    "MCP_HEADERS",
    "Human",
    "app_session",
    "http_session",
    "running_app",
    "stdio_session",
    "structured",
    "toolset_session",
]

# A raw `initialize` request and the headers streamable HTTP wants, for tests that speak the
# wire protocol themselves (limits, auth answers before any session exists).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@asynccontextmanager
async def stdio_session(
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    errlog: IO[str] | None = None,
    args: tuple[str, ...] = ("run",),
    **session_kwargs: Any,
) -> AsyncIterator[ClientSession]:
    """Spawn `python -m nextcloud_mcp_server run` and talk to it over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "nextcloud_mcp_server", *args], env=env, cwd=cwd
    )
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write, **session_kwargs) as session,
    ):
        await session.initialize()
        yield session


@contextmanager
def running_app(settings: Settings) -> Iterator[str]:
    """Serve `create_app(settings)` on a free loopback port; yield the base URL."""
    with serve_in_thread(create_app(settings)) as base:
        yield base


@asynccontextmanager
async def http_session(
    mcp_url: str, *, headers: dict[str, str] | None = None, **session_kwargs: Any
) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=httpx2.Timeout(30, read=60), verify=httpx2_verify()
        ) as http,
        streamable_http_client(mcp_url, http_client=http) as (read, write),
        ClientSession(read, write, **session_kwargs) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def app_session(settings: Settings, human: Human | None = None) -> AsyncIterator[ClientSession]:
    """`create_app(settings)` on a free loopback port and the SDK's client over streamable HTTP,
    answering the server's questions through `human` (none: the client cannot be asked)."""
    answer = {"elicitation_callback": human.answer} if human else {}
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp", **answer) as session:
            yield session


@asynccontextmanager
async def toolset_session(
    nextcloud: Nextcloud, toolsets: str, human: Human | None = None, **settings: Any
) -> AsyncIterator[ClientSession]:
    """Alice's session with `toolsets` chosen (an app's toolset is not in the default set), as
    `app_session`, with any other `settings` given."""
    config = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets=toolsets, **settings)
    async with app_session(config, human) as session:
        yield session


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool result (fails loudly otherwise)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


@dataclass
class Human:
    """The person behind the client: answers form elicitations the way a test tells it to, and
    remembers every question (message and schema) it was shown."""

    action: Literal["accept", "decline", "cancel"] = "accept"
    approve: bool = True
    reason: str = ""
    while_asked: Callable[[], Awaitable[None]] | None = None  # runs before the answer is sent
    questions: list[str] = field(default_factory=list)
    schemas: list[dict[str, Any]] = field(default_factory=list)

    async def answer(self, context: Any, params: Any) -> ElicitResult:
        self.questions.append(params.message)
        self.schemas.append(dict(getattr(params, "requested_schema", {}) or {}))
        if self.while_asked is not None:
            await self.while_asked()
        if self.action != "accept":
            return ElicitResult(action=self.action)
        return ElicitResult(action="accept", content={"approve": self.approve, "reason": self.reason})
