"""The file reminders app's OCS API: `/ocs/v2.php/apps/files_reminders/api/v1/{fileId}`.

GET answers `{"dueDate": "<ISO 8601>" | null}`; PUT `{"dueDate"}` sets one (201 new, 200
changed; 400 for a time not in the future); DELETE removes it (404 when there is none). Same on
Nextcloud 29 (files_reminders 1.2) and 34, where the app ships enabled.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Self

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NotFound
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["REMINDERS_MISSING", "RemindersClient"]

API = "apps/files_reminders/api/v1"
REMINDERS_MISSING = (
    "file reminders are not enabled on this Nextcloud; an administrator enables the app "
    "(occ app:enable files_reminders)"
)


class RemindersClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._ocs = OCSClient(http, credential)
        self._host = http.host

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    async def due(self, file_id: int) -> datetime | None:
        try:
            found = await self._ocs.request("GET", f"{API}/{file_id}")
        except NotFound:  # the route is there for any file id while the app is enabled
            raise NotFound(self._host, REMINDERS_MISSING, status=404) from None
        value = found.get("dueDate") if isinstance(found, dict) else None
        if value is None:
            return None
        try:
            return datetime.fromisoformat(str(value)).astimezone(UTC)
        except ValueError:
            raise InvalidResponse(self._host, "the file reminder's date is not ISO 8601") from None

    async def set(self, file_id: int, due: datetime) -> None:
        """Set the reminder (files_reminders answers 201 with OCS status 201 for a new one)."""
        await self._ocs.request("PUT", f"{API}/{file_id}", data={"dueDate": due.astimezone(UTC).isoformat()})

    async def remove(self, file_id: int) -> None:
        await self._ocs.request("DELETE", f"{API}/{file_id}")
