"""What can go wrong when talking to Nextcloud, as types a caller can act on.

InvalidInput (ValueError)      the caller's input was refused before anything was sent

NextcloudError                 host + a sentence a person can read; never a credential
├── NextcloudUnreachable       DNS, refused connection, reset, TLS failure
├── NextcloudTimeout           no answer within the configured timeout
├── InvalidResponse            the answer could not be understood (malformed JSON or XML)
└── NextcloudHTTPError         an HTTP status the caller did not expect (`status`, `body`)
    ├── UntrustedDomain        400: the host name is not in Nextcloud's trusted_domains
    ├── Unauthorized           401: credentials missing, wrong or revoked
    ├── Forbidden              403
    ├── NotFound               404
    ├── Conflict               409, and 405 for "already exists" on MKCOL
    ├── PreconditionFailed     412: an ETag or Overwrite precondition did not hold
    ├── RateLimited            429 after the retries ran out
    └── ServerError            5xx after the retries ran out
"""

from __future__ import annotations

from nextcloud_mcp_server.nextcloud.sabre import sabre_message

__all__ = [
    "BearerRefused",
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "InvalidResponse",
    "NextcloudError",
    "NextcloudHTTPError",
    "NextcloudTimeout",
    "NextcloudUnreachable",
    "NotFound",
    "PreconditionFailed",
    "RateLimited",
    "ServerError",
    "Unauthorized",
    "UntrustedDomain",
    "error_for_status",
]


class InvalidInput(ValueError):
    """Input that would be refused or mangled by Nextcloud; raised before any request is sent."""


class NextcloudError(Exception):
    """Base class. `str(error)` names the host and the cause, fit to show to a user."""

    def __init__(self, host: str, message: str) -> None:
        super().__init__(f"Nextcloud at {host}: {message}")
        self.host = host
        self.message = message


class NextcloudUnreachable(NextcloudError):
    """The server could not be reached (DNS, connection refused or reset, TLS)."""


class NextcloudTimeout(NextcloudError):
    """The server did not answer in time."""


class InvalidResponse(NextcloudError):
    """The server answered with something that is not what the API promises."""


class NextcloudHTTPError(NextcloudError):
    """An unexpected HTTP status. `body` is the response text, cut to a few KiB."""

    status: int = 0

    def __init__(self, host: str, message: str, *, status: int, body: str = "") -> None:
        super().__init__(host, message)
        self.status = status
        self.body = body


class Unauthorized(NextcloudHTTPError):
    """401."""


class UntrustedDomain(NextcloudHTTPError):
    """400 "Trusted domain error" (code 15): Nextcloud refuses requests for this host name."""


class BearerRefused(NextcloudHTTPError):
    """401 from an API that refuses OAuth Bearer tokens outright (Nextcloud 29's Notes API): a
    limitation of that API, not a sign that the credential was revoked - so not `Unauthorized`."""


class Forbidden(NextcloudHTTPError):
    """403."""


class NotFound(NextcloudHTTPError):
    """404."""


class Conflict(NextcloudHTTPError):
    """409 (or 405 when a collection already exists)."""


class PreconditionFailed(NextcloudHTTPError):
    """412: the resource changed since it was read, or the target exists and overwrite is off."""


class RateLimited(NextcloudHTTPError):
    """429 after retries; `retry_after` is the server's hint in seconds, if it gave one."""

    retry_after: float | None = None


class ServerError(NextcloudHTTPError):
    """5xx after retries."""


_DEFAULT_MESSAGES = {
    401: "the credentials were rejected (401); check the user name and app password",
    403: "access is forbidden (403)",
    404: "not found (404)",
    405: "the method is not allowed here (405)",
    409: "conflict (409)",
    412: "precondition failed (412): it changed since it was read",
    423: "the resource is locked (423)",
    429: "too many requests (429); try again later",
    507: "the user's storage is full (507)",
}


# How Nextcloud says that the host name of a request is not one of its trusted domains:
# /status.php answers {"error": "Trusted domain error.", "code": 15}, other pages an HTML page.
_UNTRUSTED_DOMAIN = ("Trusted domain error", "untrusted domain")


def untrusted_domain_message(host: str) -> str:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return (
        f"Nextcloud refuses requests for the host name {name} (it is not in its trusted_domains): an "
        f"administrator adds {name} to 'trusted_domains' in config/config.php (occ config:system:set "
        "trusted_domains 2 --value=" + name + "), or set NEXTCLOUD_HOST to an address Nextcloud trusts"
    )


def error_for_status(
    host: str, status: int, body: str = "", message: str | None = None
) -> NextcloudHTTPError:
    """The typed error for an HTTP status, with a default sentence when `message` is None; what
    Nextcloud itself said (a Sabre `<s:message>`) is added to it."""
    if status == 400 and message is None and any(marker in body[:16384] for marker in _UNTRUSTED_DOMAIN):
        return UntrustedDomain(host, untrusted_domain_message(host), status=status, body=body[:4096])
    cls: type[NextcloudHTTPError]
    if status == 401:
        cls = Unauthorized
    elif status == 403:
        cls = Forbidden
    elif status == 404:
        cls = NotFound
    elif status in (405, 409):
        cls = Conflict
    elif status == 412:
        cls = PreconditionFailed
    elif status == 429:
        cls = RateLimited
    elif status >= 500:
        cls = ServerError
    else:
        cls = NextcloudHTTPError
    text = message or _DEFAULT_MESSAGES.get(status) or f"refused with HTTP {status}"
    if cls is ServerError and message is None and status != 507:
        text = f"the server failed with HTTP {status}; try again later or check the Nextcloud log"
    said = sabre_message(body[:16384]) if message is None and 400 <= status < 600 else None
    if said:
        text = f"{text}; Nextcloud says: {said[:300]}"
    return cls(host, text, status=status, body=body[:4096])
