"""What the SDK's authorization endpoints leave to us, at their HTTP edge (ADR 0025, ADR 0034).

- `BoundedBody`: every body they read is bounded (the SDK reads it whole, unbounded): a
  registration at most MAX_REGISTRATION_BYTES, a form at most MAX_FORM_BYTES; a form must be
  `application/x-www-form-urlencoded` (RFC 6749 §3.2).
- /token (`check_resource`): a `resource` that is not this server's is `invalid_target` (RFC 8707
  §2), at the code exchange and at refresh alike - the SDK hands the provider no `resource` there.
- /revoke (`public_revocation`): a public client may leave out `client_secret` (RFC 7009 §2.1);
  the SDK's model requires the field, so an absent one is added empty.
- /register: a full store of unused registrations (`RegistrationsFull`) is 429 with Retry-After.
- /authorize (`IssuerOnRedirects`): every redirect back to the client names the issuer (RFC 9207),
  the SDK's error redirects included; only the redirect to our own sign-in page goes without.

Refusals are JSON in the shape of OAuth errors, readable by browser-based clients (CORS).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nextcloud_mcp_server.authz.clients import RegistrationsFull
from nextcloud_mcp_server.authz.requests import client_redirect
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "MAX_FORM_BYTES",
    "MAX_REGISTRATION_BYTES",
    "BoundedBody",
    "IssuerOnRedirects",
    "check_resource",
    "oauth_error",
    "public_revocation",
]

MAX_REGISTRATION_BYTES = 8 * 1024
MAX_FORM_BYTES = 16 * 1024
MAX_FIELDS = 50
FORM = "application/x-www-form-urlencoded"
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Retry-After"}


def oauth_error(
    status: int, error: str, description: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": error, "error_description": description},
        status_code=status,
        headers={**_NO_STORE, **_CORS, **(headers or {})},
    )


async def _read(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None when it is longer than `limit` or the client went away."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


Fields = list[tuple[str, str]]
FormCheck = Callable[[Fields], JSONResponse | Fields]


def check_resource(audiences: Sequence[str]) -> FormCheck:
    """/token: refuse a `resource` that names another server."""

    def check(fields: Fields) -> JSONResponse | Fields:
        foreign = [value for name, value in fields if name == "resource" and value and value not in audiences]
        if foreign:
            return oauth_error(
                400,
                "invalid_target",
                f"this server issues tokens only for its own MCP endpoint ({audiences[0]}), "
                f"not for {foreign[0][:200]}",
            )
        return fields

    return check


def public_revocation(fields: Fields) -> JSONResponse | Fields:
    """/revoke: a public client sends no `client_secret`; the SDK's model wants the field."""
    if any(name == "client_secret" for name, _ in fields):
        return fields
    return [*fields, ("client_secret", "")]


class BoundedBody:
    """Reads the body of a POST (bounded), checks or adjusts a form, then hands it to `app`."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        *,
        form: bool = True,
        check: FormCheck | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.form = form
        self.check = check

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = ascii_number(headers.get("content-length"))
        body = None if declared is not None and declared > self.limit else await _read(receive, self.limit)
        if body is None:
            await self._too_large()(scope, receive, send)
            return
        if self.form:
            adjusted = self._form(headers, body)
            if isinstance(adjusted, JSONResponse):
                await adjusted(scope, receive, send)
                return
            body = adjusted
        try:
            await self.app(scope, _replaying(body, receive), send)
        except RegistrationsFull as full:
            await oauth_error(429, "too_many_requests", str(full), {"Retry-After": str(full.retry_after)})(
                scope, receive, send
            )

    def _too_large(self) -> JSONResponse:
        if self.form:
            return oauth_error(413, "invalid_request", f"a request may have at most {self.limit} bytes")
        return oauth_error(
            400, "invalid_client_metadata", f"a registration may have at most {self.limit} bytes"
        )

    def _form(self, headers: Headers, body: bytes) -> JSONResponse | bytes:
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind != FORM:
            return oauth_error(400, "invalid_request", f"send the parameters as {FORM} (RFC 6749)")
        try:
            fields = parse_qsl(
                body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FIELDS
            )
        except (UnicodeDecodeError, ValueError):
            return oauth_error(400, "invalid_request", "the form is not UTF-8 text of at most 50 fields")
        if any("\x00" in name or "\x00" in value for name, value in fields):  # PostgreSQL refuses it
            return oauth_error(400, "invalid_request", "a parameter holds a NUL character")
        if self.check is None:
            return body
        checked = self.check(fields)
        if isinstance(checked, JSONResponse):
            return checked
        return urlencode(checked).encode() if checked != fields else body


class IssuerOnRedirects:
    """/authorize: adds `iss` to every redirect that goes back to the client."""

    def __init__(self, app: ASGIApp, issuer: str, own_prefix: str) -> None:
        self.app = app
        self.issuer = issuer
        self.own_prefix = own_prefix  # where authorize() sends the browser: our sign-in page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                headers = MutableHeaders(scope=message)
                location = headers.get("location")
                if (
                    location is not None
                    and not location.startswith(self.own_prefix)
                    and "iss" not in parse_qs(urlsplit(location).query)
                ):
                    headers["location"] = client_redirect(location, self.issuer)
            await send(message)

        await self.app(scope, receive, sending)
