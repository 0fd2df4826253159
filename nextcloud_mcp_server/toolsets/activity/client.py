"""The Activity app's OCS API: `/ocs/v2.php/apps/activity/api/v2/activity/{filter}`.

`filter` is `all`, `self` (by the user), `by` (by others), `files`, `files_favorites`, ...; the
answer is newest first, `limit` at most 200 per page; `since` is the id of the last activity of
the previous page (Activity's header `X-Activity-Last-Given`), not a time. No activity at all
answers 304 with no body; an unknown filter answers 404.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, ValidationError

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.models import FrozenAppModel
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.numbers import ascii_number

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

__all__ = ["Activity", "ActivityClient"]

API = "apps/activity/api/v2/activity"


class Activity(FrozenAppModel):
    id: int = Field(alias="activity_id")
    app: str = ""
    type: str = ""
    user: str | None = None  # who did it
    subject: str = ""
    object_type: str = ""
    object_name: str = ""
    objects: dict[str, str] | list[str] = Field(default_factory=dict)  # file id -> path; [] when none
    link: str = ""
    when: datetime = Field(alias="datetime")


class ActivityClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._ocs = OCSClient(http, credential)
        self._host = http.host

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    async def page(self, filter: str, *, since: int | None, limit: int) -> tuple[list[Activity], int | None]:
        """One page, newest first, and the `since` of the next page (None at the end)."""
        params: dict[str, Any] = {"limit": limit, "previews": "false"}
        if since is not None:
            params["since"] = since
        answer = await self._ocs.answer("GET", f"{API}/{filter}", params=params)
        if answer.status_code in (204, 304) or not answer.content:
            return [], None
        try:
            activities = [Activity.model_validate(a) for a in self._ocs.data(answer)]
        except (TypeError, ValidationError):
            raise InvalidResponse(self._host, "Activity answered in an unexpected shape") from None
        last = answer.headers.get("X-Activity-Last-Given")
        given = ascii_number(last, signed=True)
        return activities, given if given is not None and len(activities) >= limit else None
