"""The one pooled HTTP client that talks to Nextcloud for every user of this process.

- Connections are kept alive and reused (Nextcloud answers app-password requests in tens of ms;
  a new TLS handshake per call would dominate).
- Every request carries the credential of the user it is made for; nothing user-specific is
  kept on the client. In particular no cookies: Nextcloud answers with session cookies (and
  remember-me ones after a login), which a shared jar would send along with the next user's
  request - and a session cookie would keep a revoked app password seemingly working. Requests
  go straight to the transport (no httpx2 client: it would only add a cookie store, an auth flow
  and redirects, none of which this client wants, redirects being reported, not followed).
- Idempotent requests are retried on 423, 429, 503 and a reset connection, with exponential
  backoff and full jitter, honouring `Retry-After`. Nothing else is retried: a POST that may have
  reached the server is never sent twice. (423: Nextcloud 29's Notes API answers most of the
  requests that one user makes at once with `423 LockedException`; measured on the real server
  with 4 parallel readers, 39 of 40 and 93 of 100 list requests failed without a retry and 0 of
  40 and 1 of 100 with it. It does not always clear that fast: one run right after a burst still
  failed 93 of 100.)
- Every failure becomes a typed `NextcloudError` naming the host and the cause.
- Every answer is bounded (`http_bounds`): an overall deadline per request, a size limit on every
  body, and the limits of the DAV XML parser travel with the request (`XML_LIMITS`) to
  `dav_xml.parse_multistatus`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from http.cookiejar import CookieJar
from typing import Any
from urllib.parse import urlsplit

import httpx2

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.http_bounds import AnswerTooLarge, BoundedTransport, DeadlineExceeded, read_bounded
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidInput,
    InvalidResponse,
    NextcloudTimeout,
    NextcloudUnreachable,
    RateLimited,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.transport import Http11Transport

__all__ = [
    "IDEMPOTENT_METHODS",
    "XML_LIMITS",
    "NextcloudHTTP",
    "XmlLimits",
    "json_body",
    "no_cookies",
    "not_json",
]

logger = logging.getLogger(__name__)

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PROPFIND", "REPORT", "SEARCH"})
_RETRY_STATUSES = frozenset({423, 429, 503})
# What an error answer may add to an error message: the start of its body is enough.
_ERROR_BODY_BYTES = 64 * 1024
# Request extension carrying the DAV XML parser's limits (read by `dav_xml.parse_multistatus`).
XML_LIMITS = "nextcloud_mcp_server.xml_limits"

Sleep = Callable[[float], Awaitable[None]]


class XmlLimits:
    """Bounds of one streamed DAV multistatus: bytes per `<d:response>` entry and in all, and
    element nesting."""

    __slots__ = ("depth", "entry_bytes", "total_bytes")

    def __init__(self, entry_bytes: int, total_bytes: int, depth: int) -> None:
        self.entry_bytes = entry_bytes
        self.total_bytes = total_bytes
        self.depth = depth


def json_body(response: httpx2.Response, host: str) -> Any:
    """The response's JSON, or `InvalidResponse` naming what came back instead."""
    try:
        return response.json()
    except RecursionError:
        raise not_json(response, host, nested=True) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise not_json(response, host) from None


def not_json(response: httpx2.Response, host: str, *, nested: bool = False) -> InvalidResponse:
    """What to say of a body that should have been JSON (`nested`: JSON, but too deep to parse)."""
    if nested:
        return InvalidResponse(host, "the JSON answer is nested too deeply")
    kind = response.headers.get("content-type", "no content type")
    return InvalidResponse(host, f"expected JSON but got {kind} (HTTP {response.status_code})")


def _retry_after_seconds(response: httpx2.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _describe_transport_error(exc: BaseException) -> str:
    """A short cause for a connection failure, found by walking the exception chain."""
    pending: list[BaseException] = [exc]
    visited: set[int] = set()
    while pending:
        seen = pending.pop(0)
        if id(seen) in visited:
            continue
        visited.add(id(seen))
        if isinstance(seen, ssl.SSLCertVerificationError):
            return (
                "TLS certificate verification failed "
                f"({seen.verify_message}); set NEXTCLOUD_CA_BUNDLE for a private CA"
            )
        if isinstance(seen, ssl.SSLError):
            return f"TLS handshake failed ({seen.reason or seen.__class__.__name__})"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused; is Nextcloud running and is the port right?"
        if isinstance(seen, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(seen, ConnectionResetError):
            return "the connection was reset"
        pending += [e for e in (seen.__cause__, seen.__context__) if e is not None]
    text = str(exc) or exc.__class__.__name__
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "TLS certificate verification failed; set NEXTCLOUD_CA_BUNDLE for a private CA"
    return f"connection failed ({text})"


class _NoCookies(CookieJar):
    """A cookie jar that never takes a cookie from an answer and never adds one to a request."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


def no_cookies() -> CookieJar:
    """A cookie jar that keeps nothing (and spends no time parsing Set-Cookie headers)."""
    return _NoCookies()


class NextcloudHTTP:
    """A base URL, a connection pool and the rules for talking to one Nextcloud."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        verify: bool | ssl.SSLContext = True,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_retry_after: float = 30.0,
        max_answer_bytes: int = 32 * 1024 * 1024,
        max_dav_entry_bytes: int = 8 * 1024 * 1024,
        max_xml_depth: int = 64,
        deadline: float = 60.0,
        max_connections: int = 32,
        transport: httpx2.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        parts = urlsplit(base_url)
        self.base_url = base_url.rstrip("/")
        self.host = parts.netloc
        self.base_path = parts.path.rstrip("/")
        self.max_retries = max_retries
        # Learned once per process: this Nextcloud refuses Bearer on app APIs such as Notes.
        self.notes_refuses_bearer = False
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self.max_answer_bytes = max_answer_bytes
        self.deadline = deadline
        self._xml_limits = XmlLimits(max_dav_entry_bytes, max_answer_bytes, max_xml_depth)
        # As many kept alive as may be open: a smaller keep-alive bound makes a pool close idle
        # connections under load and open new ones (measured: 31-55 per 2 s at 64 sessions).
        inner = transport or Http11Transport(
            verify=verify, max_connections=max_connections, keepalive_expiry=30
        )
        timeouts = httpx2.Timeout(timeout, connect=min(10.0, timeout))
        self._transport = BoundedTransport(inner, answer_limit=max_answer_bytes, deadline=deadline)
        self._headers = httpx2.Headers(
            {
                "Accept": "*/*",
                "Accept-Encoding": "gzip, deflate",
                "User-Agent": f"nextcloud-mcp-server/{__version__}",
            }
        )
        # Requests are built here, not by `client.build_request` (which merges the client's
        # settings into each and parses the URL twice when there are query parameters: about
        # 0.1 ms a request): the timeouts and the XML limits travel as extensions.
        self._extensions = {XML_LIMITS: self._xml_limits, "timeout": timeouts.as_dict()}

    async def aclose(self) -> None:
        await self._transport.aclose()

    def url(self, path: str) -> str:
        """The absolute URL of a server path such as `/remote.php/dav/files/alice/`."""
        return f"{self.base_url}{path}"

    async def request(
        self,
        method: str,
        path: str,
        *,
        credential: Credential | None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        accept: frozenset[int] | set[int] = frozenset(),
    ) -> httpx2.Response:
        """Send a request and read the whole answer. Statuses 2xx, 304 and `accept` are returned;
        anything else raises the matching `NextcloudError`."""
        async with self._exchange(
            method, path, credential, params, headers, json, content, accept, stream=False
        ) as response:
            return response

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        credential: Credential | None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        content: bytes | AsyncIterator[bytes] | None = None,
        accept: frozenset[int] | set[int] = frozenset(),
    ) -> AsyncIterator[httpx2.Response]:
        """Like `request`, but the body is left unread for the caller to iterate."""
        async with self._exchange(
            method, path, credential, params, headers, None, content, accept, stream=True
        ) as response:
            yield response

    @asynccontextmanager
    async def _exchange(
        self,
        method: str,
        path: str,
        credential: Credential | None,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        json_data: Any,
        content: bytes | str | AsyncIterator[bytes] | None,
        accept: frozenset[int] | set[int],
        *,
        stream: bool,
    ) -> AsyncIterator[httpx2.Response]:
        method = method.upper()
        # An absolute URL: httpx2 parses a relative one and then the base URL joined with it again
        # (profiled: a third of the cost of building a request). Joined as httpx2 would.
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}/{path.lstrip('/')}"
        if params:
            url = f"{url}{'&' if '?' in url else '?'}{httpx2.QueryParams(params)}"
        all_headers = self._headers.copy()
        all_headers.update(headers or {})
        if credential is not None:
            all_headers["Authorization"] = credential.authorization()
        replayable = not (content is not None and not isinstance(content, bytes | str))
        retryable = method in IDEMPOTENT_METHODS and replayable
        attempt = 0
        while True:
            started = time.perf_counter()
            request = httpx2.Request(
                method, url, headers=all_headers, json=json_data, content=content, extensions=self._extensions
            )
            try:
                # Straight to the transport: httpx2's client adds nothing this needs (no auth
                # flow, redirects or cookies: see the module's notes) and cost ~5% of the
                # server's CPU per call.
                response = await self._transport.handle_async_request(request)
                response.request = request
            except DeadlineExceeded:
                raise self._deadline_error(method) from None
            except AnswerTooLarge:
                raise self._too_large() from None
            except httpx2.TimeoutException:
                raise NextcloudTimeout(self.host, f"no answer within the timeout ({method})") from None
            except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
                if retryable and attempt < self.max_retries:
                    attempt += 1
                    await self._sleep(self._backoff_delay(attempt))
                    continue
                raise NextcloudUnreachable(self.host, _describe_transport_error(exc)) from None
            except httpx2.LocalProtocolError as exc:  # a header value with a line break, say
                raise InvalidInput(str(exc)) from None
            except httpx2.TransportError as exc:
                raise NextcloudUnreachable(self.host, _describe_transport_error(exc)) from None
            status = response.status_code
            if status in _RETRY_STATUSES and retryable and attempt < self.max_retries:
                delay = _retry_after_seconds(response)
                if delay is None or delay <= self.max_retry_after:
                    await response.aclose()
                    attempt += 1
                    await self._sleep(max(delay or 0.0, self._backoff_delay(attempt)))
                    continue
            try:
                ok = 200 <= status < 300 or status == 304 or status in accept
                if ok and not stream:
                    await read_bounded(response, self.max_answer_bytes)
                logger.debug(
                    "%s %s -> %s in %.0f ms",
                    method,
                    request.url.path,
                    status,
                    (time.perf_counter() - started) * 1000,
                )
                if not ok:
                    await self._raise_for(response)
                yield response
            except DeadlineExceeded:
                raise self._deadline_error(method) from None
            except AnswerTooLarge:
                raise self._too_large() from None
            except httpx2.TimeoutException:
                raise NextcloudTimeout(self.host, f"the answer stalled ({method})") from None
            except httpx2.TransportError as exc:
                raise NextcloudUnreachable(self.host, _describe_transport_error(exc)) from None
            finally:
                await response.aclose()
            return

    def _deadline_error(self, method: str) -> NextcloudTimeout:
        return NextcloudTimeout(
            self.host,
            f"no complete answer within {self.deadline:g} s ({method}; NEXTCLOUD_REQUEST_DEADLINE_SECONDS)",
        )

    def _too_large(self) -> InvalidResponse:
        return InvalidResponse(
            self.host,
            f"the answer is larger than {self.max_answer_bytes} bytes; reading stopped there "
            "(NEXTCLOUD_MAX_ANSWER_BYTES)",
        )

    def _backoff_delay(self, attempt: int) -> float:
        # Full jitter: spreads retries of many clients over the whole window.
        return random.uniform(0, self.backoff * (2 ** (attempt - 1)))  # noqa: S311

    async def _raise_for(self, response: httpx2.Response) -> None:
        status = response.status_code
        if not response.is_stream_consumed:
            await _read_start(response, _ERROR_BODY_BYTES)
        body = response.content[:_ERROR_BODY_BYTES].decode(response.encoding or "utf-8", "replace")
        if 300 <= status < 400:
            location = response.headers.get("location", "?")
            raise error_for_status(
                self.host,
                status,
                body,
                f"redirected (HTTP {status}) to {location}; set NEXTCLOUD_HOST to the address "
                "Nextcloud answers on (check its trusted_domains and overwrite.cli.url)",
            )
        error = error_for_status(self.host, status, body)
        if isinstance(error, RateLimited):
            error.retry_after = _retry_after_seconds(response)
        raise error


async def _read_start(response: httpx2.Response, limit: int) -> None:
    """Read at most about `limit` bytes of a body and stop; `response.content` is what was read."""
    chunks: list[bytes] = []
    received = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        received += len(chunk)
        if received >= limit:
            break
    response._content = b"".join(chunks)  # what `aread()` sets; the rest is never read
