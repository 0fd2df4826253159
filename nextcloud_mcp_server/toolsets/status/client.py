"""The user status app's OCS API: `/ocs/v2.php/apps/user_status/api/v1/user_status`.

GET answers the user's status (404 "No status for the current user" before one was ever set);
PUT `status` `{"statusType"}` sets online, away, dnd (do not disturb) or invisible; PUT
`message/custom` `{"statusIcon", "message", "clearAt"}` sets the message (at most 80
characters, one emoji as icon, `clearAt` a Unix time), DELETE `message` clears it. Both PUTs
answer the whole status as GET does, so a change needs no GET after it. Same on 29 and 34.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from pydantic import Field, ValidationError

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NotFound
from nextcloud_mcp_server.nextcloud.models import FrozenAppModel, UnixTime
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["MAX_MESSAGE", "UserStatus", "UserStatusClient"]

API = "apps/user_status/api/v1/user_status"
MAX_MESSAGE = 80  # characters Nextcloud keeps of a status message


class UserStatus(FrozenAppModel):
    status: str = "offline"
    message: str | None = None
    icon: str | None = None
    clear_at: UnixTime | None = Field(default=None, alias="clearAt")


class UserStatusClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._ocs = OCSClient(http, credential)
        self._host = http.host

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    async def get(self) -> UserStatus:
        try:
            found = await self._ocs.request("GET", API)
        except NotFound:
            return UserStatus()
        return self._status(found)

    def _status(self, found: object) -> UserStatus:
        try:
            return UserStatus.model_validate(found)
        except ValidationError:
            raise InvalidResponse(self._host, "the user status answered in an unexpected shape") from None

    async def set_status(self, status: str) -> UserStatus:
        """Set the online status; the status as it is now."""
        return self._status(await self._ocs.request("PUT", f"{API}/status", data={"statusType": status}))

    async def set_message(self, message: str, icon: str | None, clear_at: int | None) -> UserStatus:
        """Set the status message; the status as it is now."""
        data = {"statusIcon": icon, "message": message, "clearAt": clear_at}
        return self._status(await self._ocs.request("PUT", f"{API}/message/custom", data=data))

    async def clear_message(self) -> None:
        await self._ocs.request("DELETE", f"{API}/message")
