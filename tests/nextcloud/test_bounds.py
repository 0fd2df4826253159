"""Bounded answers: a hostile "Nextcloud" or identity provider on loopback (tests/hostile.py) sends
huge, deep, compressed or dripping bodies; the client stops at the limit with a clear error, and
the hostile server shows how much it got to send (far less than it offered)."""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing

import pytest

from nextcloud_mcp_server.auth.oidc import OIDCUnavailable, ProviderMetadata, idp_client
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.dav.xml import UnsafeXML
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudTimeout
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from tests.hostile import OFFERED, Hostile, hostile_server

ALICE = BasicCredential("alice", "pw")
LIMIT = 256 * 1024
# What socket buffers on loopback may hold beyond what the client read, with a wide margin.
SLACK = 16 * 1024 * 1024


def bounded(url: str, **changes: float) -> NextcloudHTTP:
    options: dict[str, float] = {"max_answer_bytes": LIMIT, "deadline": 30.0, **changes}
    return NextcloudHTTP(url, max_retries=0, **options)  # type: ignore[arg-type]


async def test_a_huge_json_answer_is_refused_at_the_limit() -> None:
    async with hostile_server() as server:
        http = bounded(server.url)
        try:
            with pytest.raises(
                InvalidResponse, match=r"larger than 262144 bytes.*NEXTCLOUD_MAX_ANSWER_BYTES"
            ):
                json_body(await http.request("GET", "/huge-json", credential=ALICE), http.host)
        finally:
            await http.aclose()
    assert LIMIT < server.sent < SLACK < OFFERED


async def test_a_declared_huge_answer_is_refused_before_its_body_is_read() -> None:
    async with hostile_server() as server:
        http = bounded(server.url)
        try:
            with pytest.raises(InvalidResponse, match="larger than"):
                await http.request("GET", "/declared-huge", credential=ALICE)
        finally:
            await http.aclose()
    assert server.sent < SLACK


async def test_a_compressed_bomb_is_refused_by_its_decoded_size() -> None:
    """64 MiB of JSON gzipped to ~64 KiB on the wire: the decoded size is what counts."""
    async with hostile_server() as server:
        http = bounded(server.url)
        try:
            with pytest.raises(InvalidResponse, match="NEXTCLOUD_MAX_ANSWER_BYTES"):
                await http.request("GET", "/gzip-bomb", credential=ALICE)
        finally:
            await http.aclose()


async def webdav_stat(server: Hostile, name: str, **changes: float) -> None:
    http = bounded(server.url, max_answer_bytes=32 * 1024 * 1024, **changes)
    try:
        await WebDAVClient(http, ALICE, "alice").stat(name)
    finally:
        await http.aclose()


async def test_a_huge_dav_property_is_refused_at_the_entry_limit() -> None:
    async with hostile_server() as server:
        with pytest.raises(InvalidResponse, match=r"entry is larger than 65536 bytes.*DAV_ENTRY"):
            await webdav_stat(server, "huge-property", max_dav_entry_bytes=64 * 1024)
    assert server.requests == ["PROPFIND /remote.php/dav/files/alice/huge-property"]
    assert server.sent < SLACK


async def test_deeply_nested_xml_is_refused_at_the_depth_limit() -> None:
    async with hostile_server() as server:
        with pytest.raises(UnsafeXML, match=r"deeper than 32 \(NEXTCLOUD_MAX_XML_DEPTH\)"):
            await webdav_stat(server, "deep-xml", max_xml_depth=32)
    assert server.sent < SLACK


async def test_a_dripping_answer_ends_at_the_overall_deadline() -> None:
    """One byte every 0.2 s never trips the 30 s read timeout; the 1 s deadline ends it."""
    async with hostile_server() as server:
        http = bounded(server.url, deadline=1.0)
        started = time.monotonic()
        try:
            with pytest.raises(NextcloudTimeout, match=r"within 1 s.*NEXTCLOUD_REQUEST_DEADLINE_SECONDS"):
                await http.request("GET", "/drip", credential=ALICE)
        finally:
            await http.aclose()
    assert time.monotonic() - started < 25  # far below the read timeout it would otherwise take


async def test_a_dripping_dav_stream_ends_at_the_deadline_too() -> None:
    """The deadline covers a streamed body the caller iterates, not only buffered ones."""
    async with hostile_server() as server:
        http = bounded(server.url, deadline=1.0)

        async def read_all() -> None:
            async with http.stream("GET", "/drip", credential=ALICE) as response:
                async for _ in response.aiter_bytes():
                    pass

        try:
            with pytest.raises(NextcloudTimeout, match="NEXTCLOUD_REQUEST_DEADLINE_SECONDS"):
                await read_all()
        finally:
            await http.aclose()


def idp_settings(issuer: str, **changes: float) -> object:
    base = {
        "nextcloud_host": "https://cloud.example",
        "oidc_issuer": issuer,
        "mcp_public_url": "https://mcp.example/mcp",
        "idp_max_answer_bytes": 64 * 1024,
    }
    return load_settings(env_file=None, **{**base, **changes})


@pytest.mark.parametrize("answer", ["huge-json", "declared-huge", "deep-xml"])
async def test_the_identity_providers_answers_are_bounded(answer: str) -> None:
    """Discovery that answers with a huge body: OIDCUnavailable, reading stopped at the limit."""
    async with hostile_server() as server:
        settings = idp_settings(f"{server.url}/{answer}")
        async with aclosing(idp_client(settings)) as http:  # type: ignore[arg-type]
            with pytest.raises(OIDCUnavailable, match="larger than 65536 bytes"):
                await ProviderMetadata(f"{server.url}/{answer}", http).get()
    assert server.sent < SLACK


async def test_a_dripping_identity_provider_ends_at_its_deadline() -> None:
    async with hostile_server() as server:
        settings = idp_settings(f"{server.url}/drip", idp_request_deadline_seconds=1.0)
        async with aclosing(idp_client(settings)) as http:  # type: ignore[arg-type]
            with pytest.raises(OIDCUnavailable, match="within 1 s"):
                await ProviderMetadata(f"{server.url}/drip", http).get()


class KeepAlive:
    """Answers every request with a keep-alive body sent in two parts; counts connections."""

    def __init__(self, rest: int) -> None:
        self.rest = rest
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                first, rest = b"[" + b" " * 100, b" " * (self.rest - 2) + b"0]"
                writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {len(first) + len(rest)}\r\n\r\n".encode())
                writer.write(first)
                await writer.drain()
                await asyncio.sleep(0.05)  # the rest arrives after the client has taken the first part
                writer.write(rest)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def read_first_chunks(rest: int, requests: int) -> int:
    server = KeepAlive(rest)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    http = bounded(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}")
    try:
        for _ in range(requests):
            async with http.stream("GET", "/x", credential=ALICE) as response:
                async for _ in response.aiter_bytes():
                    break  # like a DAV stat: the first entry is enough
    finally:
        await http.aclose()
        listener.close()
    return server.connections


async def test_a_small_unread_rest_is_drained_and_the_connection_reused() -> None:
    assert await read_first_chunks(rest=2000, requests=3) == 1


async def test_a_large_unread_rest_is_not_drained() -> None:
    """Past DRAIN_BYTES the connection is closed instead: a new one per request."""
    assert await read_first_chunks(rest=200 * 1024, requests=3) == 3
