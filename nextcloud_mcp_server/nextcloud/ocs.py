"""OCS API helper: `OCS-APIRequest: true`, JSON, and the `ocs.meta` envelope unwrapped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.discovery import Recent
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, error_for_status
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.models import CurrentUser, NotesCapability, ServerStatus
from nextcloud_mcp_server.numbers import ascii_number

if TYPE_CHECKING:
    from nextcloud_mcp_server.outbound.answers import Answer

__all__ = ["OCS_HEADERS", "OCSClient", "ocs_envelope", "ocs_status"]

OCS_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}


def ocs_status(meta: object, fallback: int) -> int | None:
    """`ocs.meta.statuscode` as a number: `fallback` when it is absent, empty or 0; None when it
    is no whole number (a word, a float, a list, a meta that is no object)."""
    if not isinstance(meta, dict):
        return None
    value = meta.get("statuscode")
    if value is None or value == "" or (value == 0 and not isinstance(value, float)):
        return fallback
    if isinstance(value, str):
        return ascii_number(value, max_digits=4)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def ocs_envelope(
    payload: Any, host: str, fallback: int, what: str = "the OCS answer"
) -> tuple[int, str, Any]:
    """The status code, message and data of an OCS envelope (`fallback`: the code when the meta
    gives none); `InvalidResponse` for anything that is not one."""
    try:
        meta, data = payload["ocs"]["meta"], payload["ocs"]["data"]
    except (KeyError, TypeError, IndexError):
        raise InvalidResponse(host, f"{what} has no ocs.meta/ocs.data") from None
    code = ocs_status(meta, fallback)
    if code is None:
        raise InvalidResponse(host, f"{what} gives no status code in ocs.meta")
    return code, str(meta.get("message") or ""), data


class OCSClient:
    """Calls `/ocs/v2.php/...` for one user."""

    def __init__(
        self, http: NextcloudHTTP, credential: Credential | None, recent: Recent | None = None
    ) -> None:
        self._http = http
        self._credential = credential
        # this user's capabilities as lately told (discovery.py); None: every question is asked
        self._recent = recent if credential is not None else None

    async def request(
        self, method: str, endpoint: str, *, params: Mapping[str, Any] | None = None, data: Any = None
    ) -> Any:
        """The `ocs.data` of a call to `/ocs/v2.php/<endpoint>`."""
        return self.data(await self.answer(method, endpoint, params=params, data=data))

    async def answer(
        self,
        method: str,
        endpoint: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Any = None,
        opens_dav_session: bool = False,
    ) -> Answer:
        """The whole answer to a call to `/ocs/v2.php/<endpoint>`, for a caller that reads its
        status or headers too (an empty 204, a paging header) before its `data`."""
        return await self._http.request(
            method,
            f"/ocs/v2.php/{endpoint.lstrip('/')}",
            credential=self._credential,
            params={"format": "json", **(params or {})},
            headers=OCS_HEADERS,
            json=data,
            opens_dav_session=opens_dav_session,
        )

    def data(self, response: Answer) -> Any:
        """The `ocs.data` of an OCS answer, or the error its `ocs.meta` reports."""
        code, message, body = ocs_envelope(json_body(response, self._http.host), self._http.host, 200)
        # OCS v2 mirrors the HTTP status (201 for something made); v1-style 100 also means OK.
        if code != 100 and not 200 <= code < 300:
            raise error_for_status(self._http.host, code, message)
        return body

    async def delete_app_password(self) -> None:
        """Revoke the app password (or Nextcloud OAuth2 token) this client's credential uses."""
        await self.request("DELETE", "core/apppassword")

    async def current_user(self) -> CurrentUser:
        """Who the credential belongs to. Its session serves the credential's first WebDAV
        request, which would otherwise log the user in again (docs/ADR/0112)."""
        answer = await self.answer("GET", "cloud/user", opens_dav_session=True)
        return CurrentUser.model_validate(self.data(answer))

    async def capabilities(self) -> dict[str, Any]:
        """The capabilities now (asked; what was told is kept for `recent_capabilities`)."""
        data = await self.request("GET", "cloud/capabilities")
        if not isinstance(data, dict):
            raise InvalidResponse(self._http.host, "capabilities are not an object")
        self.told_capabilities(data)
        return data

    def told_capabilities(self, data: Any) -> None:
        """Keep what Nextcloud just said the capabilities are, asked by whoever (apps.py)."""
        if self._recent is not None and self._credential is not None and isinstance(data, dict):
            self._recent.put(self._credential.user_id, data)

    async def recent_capabilities(self) -> dict[str, Any]:
        """The capabilities as this user was told them lately (`discovery.CAPABILITIES_SECONDS`),
        else asked: for a toolset that reads which dialect an app speaks or whether it is there,
        where an answer minutes old is good enough."""
        if self._recent is None or self._credential is None:
            return await self.capabilities()
        return await self._recent.once(self._credential.user_id, self.capabilities)

    async def notes_capability(self) -> NotesCapability | None:
        """The Notes app's capability, or None when the app is not enabled."""
        caps = (await self.capabilities()).get("capabilities", {})
        notes = caps.get("notes") if isinstance(caps, dict) else None
        return NotesCapability.model_validate(notes) if isinstance(notes, dict) else None

    async def status(self) -> ServerStatus:
        """`/status.php` (no credentials needed)."""
        response = await self._http.request("GET", "/status.php", credential=None)
        return ServerStatus.model_validate(json_body(response, self._http.host))
