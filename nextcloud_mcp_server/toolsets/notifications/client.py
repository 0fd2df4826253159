"""The Notifications app's OCS API: `/ocs/v2.php/apps/notifications/api/v2/notifications`.

GET lists the user's notifications newest first (204 when no app sends any); DELETE
`notifications/{id}` dismisses one (404 when it is gone), DELETE `notifications` all of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Self

from pydantic import Field, ValidationError

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.models import FrozenAppModel
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["Notification", "NotificationsClient"]

API = "apps/notifications/api/v2/notifications"
MAX_LISTED = 500  # notifications read from one answer


class Notification(FrozenAppModel):
    id: int = Field(alias="notification_id")
    app: str = ""
    when: datetime = Field(alias="datetime")
    subject: str = ""
    message: str = ""
    link: str = ""
    object_type: str = ""
    object_id: str = ""


class NotificationsClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._ocs = OCSClient(http, credential)
        self.host = http.host

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    async def list(self) -> list[Notification]:
        answer = await self._ocs.answer("GET", API)
        if answer.status_code == 204 or not answer.content:
            return []
        try:
            return [Notification.model_validate(n) for n in self._ocs.data(answer)[:MAX_LISTED]]
        except (TypeError, ValidationError):
            raise InvalidResponse(self.host, "Notifications answered in an unexpected shape") from None

    async def dismiss(self, notification_id: int) -> None:
        await self._ocs.request("DELETE", f"{API}/{notification_id}")
