"""`BoundedClient`: one aiohttp session with the bounds every upstream request gets (ADR 0035).

- **An overall deadline** per request: connecting, sending, the headers and the whole body must be
  over within it (aiohttp's `total` timeout, which also runs while a body is read), so an answer
  dripping one byte at a time, or an endless chunked trailer, cannot hold a call.
- **A size limit on the decoded body** (`StreamedAnswer`), checked against a declared
  Content-Length before any of it is read; aiohttp itself decompresses in bounded steps.
- Header lines, fields and their number bounded by aiohttp's parser (raised to what Nextcloud
  sends); trailers too.
- No cookies (a shared jar would carry one user's session to the next user's request), no
  redirects (reported by the caller, never followed).
- Idle connections are kept shorter than the server keeps them: `keepalive` seconds, lowered when
  an answer's `Keep-Alive: timeout=N` says the server closes sooner; otherwise a request could go
  out on a connection the server is closing at that moment.
- Proxies from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`) apply when `use_proxies`;
  `.netrc` never does.
- A method, header or URL that could end a line and start another is refused before anything is
  sent (`UnsafeRequest`).

Every failure is an `OutboundError` (errors.py); callers map them to their own words.
"""

from __future__ import annotations

import base64
import functools
import io
import re
import ssl
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import certifi
from yarl import URL

from nextcloud_mcp_server import DISTRIBUTION, __version__
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.outbound.answers import Answer, StreamedAnswer
from nextcloud_mcp_server.outbound.errors import (
    AnswerStalled,
    AnswerTooLarge,
    ConnectFailed,
    DeadlineExceeded,
    ExchangeFailed,
    MalformedAnswer,
    OutboundError,
    UnsafeRequest,
    describe_cause,
)

if TYPE_CHECKING:
    import aiohttp
    import aiohttp.abc

__all__ = ["UNSET", "Body", "BoundedClient", "Bounds", "tls_context"]

# What RFC 9110 allows in a method or header name, and what must never be in a header value or URL.
_NOT_TOKEN = re.compile(r"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")
_BREAKS_LINE = re.compile(r"[\r\n\x00]")
_NOT_URL = re.compile(r"[^\x21-\x7e]")
_KEEP_ALIVE_TIMEOUT = re.compile(r"(?:^|[,\s])timeout\s*=\s*([0-9]{1,6})(?:$|[,\s])", re.IGNORECASE)
# Header lines Nextcloud sends (Content-Security-Policy, several Set-Cookie) stay well inside these.
MAX_HEADER_LINE = 16 * 1024
MAX_HEADERS = 128
MIN_KEEPALIVE = 0.5
LARGE_BODY = 256 * 1024
UNSET: Any = object()

Body = bytes | AsyncIterator[bytes] | io.BytesIO | None


@dataclass(frozen=True)
class Bounds:
    """Per request, unless the request says otherwise: the decoded body's limit and the overall
    deadline (None: none), and the waits for a connection and for each read."""

    answer_bytes: int | None
    deadline: float | None
    read_timeout: float
    connect_timeout: float


def tls_context(verify: bool | ssl.SSLContext) -> ssl.SSLContext | bool:
    """What aiohttp gets for `ssl=`: a given context, False (no verification), or the system's
    verifying context (with certifi's roots where the system has none)."""
    if not isinstance(verify, bool):
        return verify
    if not verify:
        return False
    return _system_context()


@functools.cache
def _system_context() -> ssl.SSLContext:
    """Built once per process and shared by every client, as aiohttp does with its own default:
    building one reads the whole CA bundle (30 ms of CPU, more on a busy machine), and nothing
    changes a context once built. The system's trust store is thus read when the first client is
    made, not again for each one."""
    context = ssl.create_default_context()
    if not context.cert_store_stats().get("x509_ca"):
        context.load_verify_locations(certifi.where())
    return context


def _check_request(method: str, url: str, headers: Mapping[str, str]) -> None:
    if not method or _NOT_TOKEN.search(method):
        raise UnsafeRequest(f"{method!r} is not an HTTP method")
    if _NOT_URL.search(url):
        raise UnsafeRequest("the URL contains a space or a control character")
    for name, value in headers.items():
        if not name or _NOT_TOKEN.search(name):
            raise UnsafeRequest(f"{name!r} is not a header name")
        if _BREAKS_LINE.search(value):
            raise UnsafeRequest(f"the {name} header contains a line break or NUL")
        if not value.isascii():
            raise UnsafeRequest(f"the {name} header contains characters outside ASCII")


def _translate(exc: BaseException, deadline: float | None) -> OutboundError:
    """aiohttp's errors (and the deadline's) as ours; the socket's error kept as the cause."""
    import aiohttp  # here, not at the top: only for start-up cost (docs/ADR/0069)

    if isinstance(exc, OutboundError):
        return exc
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return ConnectFailed("no connection within the connect timeout")
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return AnswerStalled("the answer stalled (no data within the read timeout)")
    if isinstance(exc, TimeoutError):
        return DeadlineExceeded(deadline or 0.0)
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ClientProxyConnectionError):
        return ConnectFailed(describe_cause(exc))
    if isinstance(exc, aiohttp.ClientPayloadError):
        return MalformedAnswer(f"the answer's body could not be read ({_first_line(exc)})")
    if isinstance(exc, aiohttp.ClientResponseError):
        return MalformedAnswer(f"the answer is not HTTP this client reads ({exc.message})")
    if isinstance(exc, aiohttp.InvalidURL):
        return UnsafeRequest(f"not a usable URL ({exc})")
    if isinstance(exc, aiohttp.ClientError | OSError):
        return ExchangeFailed(describe_cause(exc))
    if isinstance(exc, ValueError):  # aiohttp's own refusal of a header with a line break
        return UnsafeRequest(str(exc))
    raise exc


def _first_line(exc: BaseException) -> str:
    return (str(exc) or exc.__class__.__name__).splitlines()[0][:200]


class BoundedClient:
    """One connection pool for one kind of upstream, with `Bounds` on every request."""

    def __init__(
        self,
        bounds: Bounds,
        *,
        max_connections: int = 32,
        verify: bool | ssl.SSLContext = True,
        keepalive: float = 4.0,
        headers: Mapping[str, str] | None = None,
        resolver: aiohttp.abc.AbstractResolver | None = None,
        use_proxies: bool = True,
        trace_configs: Sequence[aiohttp.TraceConfig] = (),
    ) -> None:
        self.bounds = bounds
        self.keepalive = keepalive
        self._max_connections = max_connections
        self._ssl = tls_context(verify)
        # Every request names this server, so that upstream administrators can tell it apart.
        self._headers = {"User-Agent": f"{DISTRIBUTION}/{__version__}", **(headers or {})}
        self._resolver = resolver
        self._trace_configs = list(trace_configs)
        self._proxies = urllib.request.getproxies_environment() if use_proxies else {}
        self._proxy_for: dict[tuple[str, str], str | None] = {}
        self._session: aiohttp.ClientSession | None = None

    def proxy(self, url: str) -> str | None:
        """The proxy a request to `url` goes through (the environment's rules), or None."""
        parsed = URL(url, encoded=True)
        key = (parsed.scheme, parsed.raw_host or "")
        if key not in self._proxy_for:
            chosen = self._proxies.get(parsed.scheme)
            # the environment as read when this client was made (NO_PROXY included); not in typeshed
            bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
            if chosen and bypass(parsed.raw_host or "", self._proxies):
                chosen = None
            self._proxy_for[key] = chosen or None
        return self._proxy_for[key]

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp  # here, not at the top: only for start-up cost (docs/ADR/0069)

            connector = aiohttp.TCPConnector(
                limit=self._max_connections,
                limit_per_host=0,
                ssl=self._ssl,
                keepalive_timeout=self.keepalive,
                resolver=self._resolver,
                use_dns_cache=self._resolver is None,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None),
                auto_decompress=True,
                trust_env=False,
                max_line_size=MAX_HEADER_LINE,
                max_field_size=MAX_HEADER_LINE,
                max_headers=MAX_HEADERS,
                trace_configs=self._trace_configs or None,
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Body = None,
        limit: int | None = UNSET,
        deadline: float | None = UNSET,
    ) -> Answer:
        """Send a request and read its whole answer, whatever its status."""
        async with self.stream(
            method, url, headers=headers, data=data, limit=limit, deadline=deadline
        ) as got:
            return await got.answer()

    async def post_form(
        self, url: str, form: Mapping[str, str], *, basic: tuple[str, str] | None = None
    ) -> Answer:
        """POST an `application/x-www-form-urlencoded` body (an OAuth token, introspection or
        revocation request), with HTTP Basic client authentication when `basic` is given."""
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if basic is not None:
            pair = f"{basic[0]}:{basic[1]}".encode()
            headers["Authorization"] = f"Basic {base64.b64encode(pair).decode()}"
        return await self.request("POST", url, headers=headers, data=urlencode(form).encode())

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Body = None,
        limit: int | None = UNSET,
        deadline: float | None = UNSET,
    ) -> AsyncIterator[StreamedAnswer]:
        """Send a request; the answer's body is left on the wire for the caller to read."""
        limit = self.bounds.answer_bytes if limit is UNSET else limit
        deadline = self.bounds.deadline if deadline is UNSET else deadline
        all_headers = {**self._headers, **(headers or {})}
        _check_request(method, url, all_headers)
        answer = await self._transmit(method, url, all_headers, data, limit, deadline)
        try:
            declared = ascii_number(answer.headers.get("content-length"))
            if limit is not None and declared is not None and declared > limit:
                answer.abandon()  # not even the start of it is read
                raise AnswerTooLarge(limit)
            self._learn_keepalive(answer.headers.get("keep-alive"))
            yield answer
        finally:
            await answer.aclose()

    async def _transmit(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        data: Body,
        limit: int | None,
        deadline: float | None,
    ) -> StreamedAnswer:
        """The one place that hands a request to aiohttp (unit tests put fake answers here)."""
        import aiohttp  # here, not at the top: only for start-up cost (docs/ADR/0069)

        timeout = aiohttp.ClientTimeout(
            total=deadline, connect=self.bounds.connect_timeout, sock_read=self.bounds.read_timeout
        )
        if isinstance(data, bytes) and len(data) > LARGE_BODY:
            data = io.BytesIO(data)  # sent in parts (aiohttp warns of large bytes); a new one per try
        try:
            response = await self._open_session().request(
                method,
                URL(url, encoded=True),
                headers=headers,
                data=data,
                allow_redirects=False,
                timeout=timeout,
                proxy=self.proxy(url),
            )
        except BaseException as exc:
            if isinstance(exc, aiohttp.ClientError | OSError | ValueError):
                raise _translate(exc, deadline) from exc
            raise

        async def read_chunk() -> bytes:
            try:
                return await response.content.readany()
            except (aiohttp.ClientError, OSError) as exc:
                raise _translate(exc, deadline) from exc

        def release(reusable: bool) -> None:
            if reusable:
                response.release()
            else:
                response.close()

        return StreamedAnswer(
            response.status,
            response.headers,
            str(response.url),
            read_chunk=read_chunk,
            release=release,
            limit=limit,
        )

    def _learn_keepalive(self, header: str | None) -> None:
        """A server that says it keeps idle connections N s: ours are dropped a second sooner."""
        if not header:
            return
        found = _KEEP_ALIVE_TIMEOUT.search(header)
        if found is None:
            return
        seconds = int(found.group(1))
        wanted = max(MIN_KEEPALIVE, seconds - 1.0 if seconds >= 2 else seconds / 2)
        if wanted < self.keepalive:
            self.keepalive = wanted
            if self._session is not None:
                _set_idle_limit(self._session.connector, wanted)


def _set_idle_limit(connector: aiohttp.BaseConnector | None, seconds: float) -> None:
    """aiohttp reads its keep-alive limit when it hands out or sweeps idle connections, and has no
    setter for it; `tests/outbound/test_client.py` (idle connections) proves it still takes effect."""
    if connector is not None and hasattr(connector, "_keepalive_timeout"):
        connector._keepalive_timeout = seconds
