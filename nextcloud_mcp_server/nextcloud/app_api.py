"""An app's own JSON API for one user, as the apps' clients call it. Knows nothing of MCP.

What every such client needs, once:
- a request under the app's base path with the user's credential and the app's headers;
- the answer's JSON, unwrapped where the app wraps it (the OCS envelope's `ocs.data`, or the app's
  own `{"status": "success", ...}`), and parsed into typed answers;
- a refusal that says what the app said: `Cookbook refused: <its words>` with the status's own
  error type; the app's "not installed" sentence when Nextcloud answers 404 without the app's
  words (its own 404 page); Nextcloud's error as it is when the app said nothing, and always for
  401 and 429 (whoever handles those still sees them).
An app's own cases (an unknown recipe, a name taken twice) come first, through `special`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.http import json_body

if TYPE_CHECKING:
    from collections.abc import Mapping

    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
    from nextcloud_mcp_server.outbound.answers import Answer

__all__ = ["JSON_HEADERS", "AppAPI", "Places", "Special", "words_in"]

JSON_HEADERS = {"Accept": "application/json"}
MAX_WORDS = 300  # characters of an app's own sentence passed on
_READ = 8192  # characters of an error body looked at for it

# Where an app puts its sentence in an error body: paths of keys and list indexes, tried in order;
# `()` is the body itself (an app that answers a bare JSON string).
Places = tuple[tuple[str | int, ...], ...]
# An app's own reading of a refusal: (the error, the app's words, what was asked for) -> the
# error to raise, or None for the common rules.
Special = Callable[[NextcloudHTTPError, str, str], NextcloudError | None]
_T = TypeVar("_T")


def words_in(body: str, places: Places) -> str:
    """The app's own sentence in an error body: the first non-empty string at one of `places`,
    cut to 300 characters; "" when there is none (or the body is not JSON, or nests too deep)."""
    try:
        found = json.loads(body[:_READ])
    except (ValueError, RecursionError):
        return ""
    for place in places:
        value = found
        for key in place:
            if isinstance(key, int):
                value = value[key] if isinstance(value, list) and -1 < key < len(value) else None
            else:
                value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value:
            return value[:MAX_WORDS]
    return ""


class AppAPI:
    """One app's API (`base`, e.g. `/index.php/apps/cookbook/api/v1`) for one user.

    `app` names it in sentences ("Cookbook refused: ..."), `missing` is what a 404 without the
    app's words means (the app is not there for this user), `words` where the app's sentence
    stands in an error body, `params` what every request carries (`{"format": "json"}` for OCS).
    """

    def __init__(
        self,
        http: NextcloudHTTP,
        credential: Credential | None,
        base: str,
        *,
        app: str,
        missing: str,
        words: Places = (("message",),),
        headers: Mapping[str, str] = JSON_HEADERS,
        params: Mapping[str, str] | None = None,
        special: Special | None = None,
    ) -> None:
        self._http = http
        self._credential = credential
        self.base = base
        self.app = app
        self.missing = missing
        self._words = words
        self._headers = headers
        self._params = params
        self._special = special

    @property
    def host(self) -> str:
        return self._http.host

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        body: Any = None,
        accept: frozenset[int] = frozenset(),
    ) -> Answer:
        """The answer to `method` on `base + path` (a mapping or a list of pairs for `params`);
        Nextcloud's error as it is for an unexpected status."""
        if self._params:
            params = [*self._params.items(), *(params.items() if hasattr(params, "items") else params or ())]
        return await self._http.request(
            method,
            f"{self.base}{path}",
            credential=self._credential,
            headers=self._headers,
            params=params,
            json=body,
            accept=accept,
        )

    async def call(self, method: str, path: str, what: str, *, params: Any = None, body: Any = None) -> Any:
        """The JSON answer to a request for `what` ("recipe 7"), or the refusal in the app's words."""
        try:
            answer = await self.request(method, path, params=params, body=body)
        except NextcloudHTTPError as exc:
            raise self.refusal(exc, what) from None
        return json_body(answer, self.host)

    def words(self, body: str) -> str:
        """The app's own sentence in an error body, or ""."""
        return words_in(body, self._words)

    def refusal(self, exc: NextcloudHTTPError, what: str) -> NextcloudError:
        """The error to raise for `exc`, met while asking for `what`."""
        said = self.words(exc.body)
        if self._special is not None and (special := self._special(exc, said, what)) is not None:
            return special
        if exc.status == 404 and not said:
            return NotFound(self.host, self.missing, status=404, body=exc.body)
        if not said or exc.status in (401, 429):
            return exc
        return error_for_status(self.host, exc.status, exc.body, f"{self.app} refused: {said}")

    def ocs_data(self, payload: Any, what: str) -> Any:
        """`ocs.data` of an OCS answer for `what`."""
        try:
            return payload["ocs"]["data"]
        except (KeyError, TypeError, IndexError):
            raise InvalidResponse(self.host, f"{self.app} answered {what} without ocs.data") from None

    def succeeded(self, payload: Any, what: str) -> dict[str, Any]:
        """An answer of the form `{"status": "success", ...}`, whole."""
        if not isinstance(payload, dict) or payload.get("status") != "success":
            raise InvalidResponse(self.host, f"{self.app} did not answer {what} with success")
        return payload

    def parse(self, adapter: TypeAdapter[_T], value: Any, what: str) -> _T:
        """`value` as the typed answer `adapter` reads, or `InvalidResponse` naming `what`."""
        try:
            return adapter.validate_python(value)
        except ValidationError:
            raise InvalidResponse(self.host, f"{self.app} answered {what} in an unknown shape") from None
