"""The one pooled HTTP client that talks to Nextcloud for every user of this process.

- Connections are kept alive and reused (Nextcloud answers app-password requests in tens of ms;
  a new TLS handshake per call would dominate), on one aiohttp session with the bounds of
  `outbound.client` (overall deadline, decoded-size limit, header limits, no shared cookie jar:
  it would carry one user's Nextcloud session into the next user's request; no redirects, which
  are reported with what to set instead). Nextcloud's WebDAV session is sent back to the app
  password it was given to, and nowhere else (`dav_sessions`, docs/ADR/0106).
- Every request carries the credential of the user it is made for; nothing user-specific is
  kept on the client.
- Idempotent requests are retried on 423, 429, 503 and a broken connection, with exponential
  backoff and full jitter, honouring `Retry-After`; a request that never left (no connection
  could be made) is retried whatever its method. Nothing else is retried: a POST that may have
  reached the server is never sent twice. (423: Nextcloud 29's Notes API answers most of the
  requests that one user makes at once with `423 LockedException`; measured on the real server
  with 4 parallel readers, 39 of 40 and 93 of 100 list requests failed without a retry and 0 of
  40 and 1 of 100 with it.)
- Every failure becomes a typed `NextcloudError` naming the host, the cause and what to do.
- The limits of the DAV XML parser travel with a streamed answer (`XML_LIMITS` in its `extras`)
  to `dav_xml.parse_multistatus`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import re
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from nextcloud_mcp_server import DISTRIBUTION, __version__
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav_sessions import DavSessions
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidInput,
    InvalidResponse,
    NextcloudError,
    NextcloudTimeout,
    NextcloudUnreachable,
    RateLimited,
    error_for_status,
)
from nextcloud_mcp_server.outbound.answers import Answer, StreamedAnswer, all_values
from nextcloud_mcp_server.outbound.client import Body, BoundedClient, Bounds
from nextcloud_mcp_server.outbound.errors import (
    AnswerStalled,
    AnswerTooLarge,
    ConnectFailed,
    DeadlineExceeded,
    ExchangeFailed,
    MalformedAnswer,
    OutboundError,
    UnsafeRequest,
)

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "IDEMPOTENT_METHODS",
    "XML_LIMITS",
    "Answer",
    "NextcloudHTTP",
    "StreamedAnswer",
    "XmlLimits",
    "json_body",
    "not_json",
    "retry_after_seconds",
]

logger = logging.getLogger(__name__)

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PROPFIND", "REPORT", "SEARCH"})
_RETRY_STATUSES = frozenset({423, 429, 503})
# What an error answer may add to an error message: the start of its body is enough.
_ERROR_BODY_BYTES = 64 * 1024
# Where a streamed answer carries the DAV XML parser's limits (read by `dav_xml.parse_multistatus`).
XML_LIMITS = "xml_limits"
_DIGITS = re.compile(r"[0-9]{1,9}")

Sleep = Callable[[float], Awaitable[None]]


class XmlLimits:
    """Bounds of one streamed DAV multistatus: bytes per `<d:response>` entry and in all, and
    element nesting."""

    __slots__ = ("depth", "entry_bytes", "total_bytes")

    def __init__(self, entry_bytes: int, total_bytes: int, depth: int) -> None:
        self.entry_bytes = entry_bytes
        self.total_bytes = total_bytes
        self.depth = depth


def json_body(response: Answer, host: str) -> Any:
    """The response's JSON, or `InvalidResponse` naming what came back instead."""
    try:
        return response.json()
    except RecursionError:
        raise not_json(response, host, nested=True) from None
    except ValueError:  # not JSON, not text, or an integer of more than 4,300 digits
        raise not_json(response, host) from None


def not_json(response: Answer, host: str, *, nested: bool = False) -> InvalidResponse:
    """What to say of a body that should have been JSON (`nested`: JSON, but too deep to parse)."""
    if nested:
        return InvalidResponse(host, "the JSON answer is nested too deeply")
    kind = response.headers.get("content-type", "no content type")
    return InvalidResponse(host, f"expected JSON but got {kind} (HTTP {response.status_code})")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds from now: ASCII digits or an HTTP date; None for anything else."""
    value = (value or "").strip()
    if not value:
        return None
    if _DIGITS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


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
        keepalive: float = 4.0,
        trace_configs: Sequence[aiohttp.TraceConfig] = (),
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
        # WebDAV sessions sent back per app password (docs/ADR/0106)
        self.dav_sessions = DavSessions()
        self._dav_prefix = f"{self.base_url}/remote.php/"
        self.client = BoundedClient(
            Bounds(
                answer_bytes=max_answer_bytes,
                deadline=deadline,
                read_timeout=timeout,
                connect_timeout=min(10.0, timeout),
            ),
            max_connections=max_connections,
            verify=verify,
            keepalive=keepalive,
            headers={
                "Accept": "*/*",
                "Accept-Encoding": "gzip, deflate",
                "User-Agent": f"{DISTRIBUTION}/{__version__}",
            },
            trace_configs=trace_configs,
        )

    @property
    def proxy(self) -> str | None:
        """The proxy Nextcloud requests go through (from the environment), or None."""
        return self.client.proxy(self.base_url)

    async def aclose(self) -> None:
        await self.client.aclose()

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
        opens_dav_session: bool = False,
    ) -> Answer:
        """Send a request and read the whole answer. Statuses 2xx, 304 and `accept` are returned;
        anything else raises the matching `NextcloudError`. `opens_dav_session`: the session of
        this (OCS) answer is kept for the credential's WebDAV requests (docs/ADR/0112)."""
        body, headers = _body(json, content, headers)
        _, got = await self._open(
            method,
            path,
            credential,
            params,
            headers,
            body,
            accept,
            whole=True,
            opens_dav_session=opens_dav_session,
        )
        assert isinstance(got, Answer)
        return got

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
    ) -> AsyncIterator[StreamedAnswer]:
        """Like `request`, but the body is left unread for the caller to iterate."""
        stack, got = await self._open(method, path, credential, params, headers, content, accept, whole=False)
        assert isinstance(got, StreamedAnswer)
        got.extras[XML_LIMITS] = self._xml_limits
        async with stack:
            try:
                yield got
            except OutboundError as exc:  # raised while the caller read the body
                raise self._failure(exc, method.upper()) from None

    async def _open(
        self,
        method: str,
        path: str,
        credential: Credential | None,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        body: Body,
        accept: frozenset[int] | set[int],
        *,
        whole: bool,
        opens_dav_session: bool = False,
    ) -> tuple[AsyncExitStack, Answer | StreamedAnswer]:
        """Send, retrying what may be retried; the answer read whole, or open on the stack."""
        method = method.upper()
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}/{path.lstrip('/')}"
        if params:
            url = f"{url}{'&' if '?' in url else '?'}{urlencode(params)}"
        all_headers = dict(headers or {})
        if credential is not None:
            all_headers["Authorization"] = credential.authorization()
        replayable = body is None or isinstance(body, bytes)
        retryable = method in IDEMPOTENT_METHODS and replayable
        webdav = url.startswith(self._dav_prefix)
        authorization = all_headers.get("Authorization", "")
        session, learns = self.dav_sessions.keys_for(
            credential, authorization, method, webdav, replayable, opens_session=opens_dav_session
        )
        attempt = 0
        while True:
            started = time.perf_counter()
            stack = AsyncExitStack()
            retry_in: float | None = None
            cookie = self.dav_sessions.cookie_header(session) if session else None
            sent = {**all_headers, "Cookie": cookie} if cookie else all_headers
            try:
                answer = await stack.enter_async_context(
                    self.client.stream(method, url, headers=sent, data=body)
                )
                status = answer.status_code
                if session and status == 401 and cookie:
                    # the session is no longer good for this request: once more without it
                    self.dav_sessions.forget(session)
                    session = None
                    await stack.aclose()
                    continue
                if learns and (200 <= status < 300 or status == 304):
                    self.dav_sessions.learn(learns, all_values(answer.headers, "set-cookie"))
                if status in _RETRY_STATUSES and retryable and attempt < self.max_retries:
                    delay = retry_after_seconds(answer.headers.get("retry-after"))
                    if delay is None or delay <= self.max_retry_after:
                        retry_in = max(delay or 0.0, self._backoff_delay(attempt + 1))
                if retry_in is None:
                    logger.debug(
                        "%s %s -> %s in %.0f ms",
                        method,
                        urlsplit(url).path,
                        status,
                        (time.perf_counter() - started) * 1000,
                    )
                    if not (200 <= status < 300 or status == 304 or status in accept):
                        await self._raise_for(answer)
                    got: Answer | StreamedAnswer = await answer.answer() if whole else answer
            except BaseException as exc:
                await stack.aclose()
                if isinstance(exc, UnsafeRequest):
                    raise InvalidInput(str(exc)) from None
                nothing_sent = isinstance(exc, ConnectFailed) and replayable
                broken = isinstance(exc, ConnectFailed | ExchangeFailed)
                if broken and (retryable or nothing_sent) and attempt < self.max_retries:
                    retry_in = self._backoff_delay(attempt + 1)
                elif isinstance(exc, OutboundError):
                    raise self._failure(exc, method) from None
                else:
                    raise
            if retry_in is not None:
                await stack.aclose()
                attempt += 1
                await self._sleep(retry_in)
                continue
            if whole:
                await stack.aclose()
            return stack, got

    def _failure(self, exc: OutboundError, method: str) -> NextcloudError:
        """Our words for a failed exchange, with the setting to change where there is one."""
        if isinstance(exc, DeadlineExceeded):
            return NextcloudTimeout(
                self.host,
                f"no complete answer within {self.deadline:g} s "
                f"({method}; NEXTCLOUD_REQUEST_DEADLINE_SECONDS)",
            )
        if isinstance(exc, AnswerTooLarge):
            return InvalidResponse(
                self.host,
                f"the answer is larger than {exc.limit} bytes; reading stopped there "
                "(NEXTCLOUD_MAX_ANSWER_BYTES)",
            )
        if isinstance(exc, AnswerStalled):
            return NextcloudTimeout(
                self.host, f"no answer within the timeout ({method}; NEXTCLOUD_TIMEOUT_SECONDS)"
            )
        if isinstance(exc, MalformedAnswer):
            return InvalidResponse(self.host, str(exc))
        message = str(exc)
        if "certificate verification" in message:
            message += "; set NEXTCLOUD_CA_BUNDLE for a private CA"
        return NextcloudUnreachable(self.host, message)

    def _backoff_delay(self, attempt: int) -> float:
        # Full jitter: spreads retries of many clients over the whole window.
        return random.uniform(0, self.backoff * (2 ** (attempt - 1)))  # noqa: S311

    async def _raise_for(self, answer: StreamedAnswer) -> None:
        status = answer.status_code
        try:
            start = await answer.read_start(_ERROR_BODY_BYTES)
        except OutboundError:
            start = b""  # the status says enough
        body = start[:_ERROR_BODY_BYTES].decode("utf-8", "replace")
        if 300 <= status < 400:
            location = answer.headers.get("location", "?")
            raise error_for_status(
                self.host,
                status,
                body,
                f"redirected (HTTP {status}) to {location}; set NEXTCLOUD_HOST to the address "
                "Nextcloud answers on (check its trusted_domains and overwrite.cli.url)",
            )
        error = error_for_status(self.host, status, body)
        if isinstance(error, RateLimited):
            error.retry_after = retry_after_seconds(answer.headers.get("retry-after"))
        raise error


def _body(
    data: Any, content: bytes | str | None, headers: Mapping[str, str] | None
) -> tuple[bytes | None, Mapping[str, str] | None]:
    """A request body as bytes: JSON (with its content type) or the given content."""
    if data is not None:
        encoded = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        return encoded, {"Content-Type": "application/json", **(headers or {})}
    if isinstance(content, str):
        return content.encode(), headers
    return content, headers
