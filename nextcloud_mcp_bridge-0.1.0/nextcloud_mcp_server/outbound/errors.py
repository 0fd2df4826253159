"""What can go wrong with a request to an upstream, in words a person can act on.

OutboundError                  str() is a short cause, never a credential
├── ConnectFailed              no connection: nothing was sent (DNS, refused, TLS, connect timeout)
├── ExchangeFailed             the connection broke during the exchange: the request may have arrived
├── AnswerStalled              no byte of the answer within the read timeout
├── DeadlineExceeded           the whole exchange did not finish within its deadline
├── AnswerTooLarge             the (decoded) answer is larger than its limit; reading stopped there
├── MalformedAnswer            not HTTP we can read: headers too long, bad framing or compression
└── UnsafeRequest              a method, header or URL that could split the request; nothing sent
"""

from __future__ import annotations

import socket
import ssl

__all__ = [
    "AddressRefused",
    "AnswerStalled",
    "AnswerTooLarge",
    "ConnectFailed",
    "DeadlineExceeded",
    "ExchangeFailed",
    "MalformedAnswer",
    "OutboundError",
    "UnsafeRequest",
    "describe_cause",
]


class OutboundError(Exception):
    """A request to an upstream failed; `str()` says why in a few words."""


class AddressRefused(OSError):
    """A host that is, or resolves to, an address the request may not reach (raised by a resolver)."""


class ConnectFailed(OutboundError):
    """No connection could be made, so nothing of the request was sent."""


class ExchangeFailed(OutboundError):
    """The connection broke after the request started: it may have reached the server."""


class AnswerStalled(OutboundError):
    """The server went quiet for longer than the read timeout."""


class DeadlineExceeded(OutboundError):
    """The whole exchange (connect, send, headers, body) did not finish within `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


class AnswerTooLarge(OutboundError):
    """The answer is larger than `limit` bytes; reading stopped at the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is larger than {limit} bytes")
        self.limit = limit


class MalformedAnswer(OutboundError):
    """The answer is not HTTP this client can read."""


class UnsafeRequest(OutboundError, ValueError):
    """Refused before sending: a method, header or URL that could end a line and start another."""


def describe_cause(exc: BaseException) -> str:
    """A short cause for a failed connection, found by walking the exception chain."""
    pending: list[BaseException] = [exc]
    visited: set[int] = set()
    while pending:
        seen = pending.pop(0)
        if id(seen) in visited:
            continue
        visited.add(id(seen))
        if isinstance(seen, AddressRefused):
            return str(seen)
        if isinstance(seen, ssl.SSLCertVerificationError) and hasattr(seen, "verify_message"):
            return f"TLS certificate verification failed ({seen.verify_message})"
        if isinstance(seen, ssl.SSLError) and not hasattr(seen, "os_error"):
            reason = seen.reason or seen.__class__.__name__
            if reason in ("WRONG_VERSION_NUMBER", "HTTP_REQUEST", "RECORD_LAYER_FAILURE"):
                return f"TLS handshake failed ({reason}): this port does not speak TLS; try http://"
            return f"TLS handshake failed ({reason})"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused; is the server running and is the port right?"
        if isinstance(seen, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(seen, ConnectionResetError):
            return "the connection was reset"
        pending += [e for e in (seen.__cause__, seen.__context__) if e is not None]
        # aiohttp keeps the socket's error as an attribute, not as the cause
        wrapped = (getattr(seen, name, None) for name in ("os_error", "certificate_error"))
        pending += [e for e in wrapped if isinstance(e, BaseException)]
    text = str(exc) or exc.__class__.__name__
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "TLS certificate verification failed"
    return f"connection failed ({text})"
