"""The Polls app. Knows nothing of MCP.

Two APIs, by release (seen on the real Polls 7.5.0 on Nextcloud 29 and 9.2.0 on 34):
- Polls 9 (it announces a `polls` capability): OCS `/ocs/v2.php/apps/polls/api/v1.0/...`, answers in
  `ocs.data`, an option added as `{"option": {"text": ...}}`, an unknown poll answers 400
  "Poll not found";
- Polls 7 (no capability): plain REST `/index.php/apps/polls/api/v1.0/...` with bare JSON, an option
  added as `{"pollOptionText": ...}`, an unknown poll answers 404 `{"error": "Not found"}`.
Otherwise alike: `poll` (create `{"title", "type": "textPoll"}`), `polls`, `poll/{id}`,
`poll/{id}/options`, `poll/{id}/votes`, `PUT option/{id}/vote/{yes|no|maybe}`, `DELETE poll/{id}`.

Which of the two a Nextcloud speaks is asked once (its capabilities) and kept per Nextcloud for
`DIALECT_SECONDS`: a tool call then makes only the requests of its answer, not one more for the
dialect each time (issue 43). A Polls upgraded meanwhile is met within those seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text
from nextcloud_mcp_server.nextcloud.ocs import OCS_HEADERS, OCSClient

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "DIALECT_SECONDS",
    "POLLS_MISSING",
    "Dialects",
    "Poll",
    "PollOption",
    "PollVote",
    "PollsClient",
    "dialects",
]

OCS = "/ocs/v2.php/apps/polls/api/v1.0"
REST = "/index.php/apps/polls/api/v1.0"
POLLS_MISSING = "Polls is not installed or not enabled for you on this Nextcloud"
DIALECT_SECONDS = 300.0  # as long as the enabled apps are kept (NEXTCLOUD_APPS_CACHE_SECONDS' default)
MAX_HOSTS = 256


class Dialects:
    """Whether each Nextcloud's Polls speaks the OCS API, for `seconds`; at most `max_hosts`
    Nextclouds (the oldest answer forgotten first). Polls is installed per Nextcloud, so the
    answer is the same for all its users."""

    def __init__(
        self,
        seconds: float = DIALECT_SECONDS,
        *,
        max_hosts: int = MAX_HOSTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds, self.max_hosts, self._clock = seconds, max_hosts, clock
        self._known: dict[str, tuple[float, bool]] = {}

    def get(self, host: str) -> bool | None:
        found = self._known.get(host)
        if found is None or found[0] <= self._clock():
            self._known.pop(host, None)
            return None
        return found[1]

    def put(self, host: str, modern: bool) -> None:
        self._known.pop(host, None)
        self._known[host] = (self._clock() + self.seconds, modern)
        while len(self._known) > self.max_hosts:
            del self._known[next(iter(self._known))]


dialects = Dialects()  # the process's


def _special(exc: NextcloudHTTPError, said: str, what: str) -> NextcloudError | None:
    """An unknown poll: 400 "Poll not found" from Polls 9, 404 "Not found" from Polls 7."""
    if "not found" in said.casefold():
        return NotFound(exc.host, f"{what} does not exist or is not shared with you", status=404)
    return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Poll(AppModel):
    id: int
    type: str = ""
    title: str = ""
    description: str = ""
    owner: str = ""
    created: int = 0
    expire: int = 0
    archived: bool = False

    @classmethod
    def read(cls, raw: Any) -> Poll:
        if not isinstance(raw, dict):
            raise ValueError("not a poll")
        config, status, owner = (_object(raw.get(key)) for key in ("configuration", "status", "owner"))
        return cls.model_validate(
            {
                "id": raw.get("id"),
                "type": plain_text(raw.get("type")),
                "title": plain_text(config.get("title")),
                "description": plain_text(config.get("description")),
                "owner": plain_text(owner.get("userId")),
                "created": status.get("created") or raw.get("created") or 0,
                "expire": config.get("expire") or 0,
                "archived": bool(status.get("isArchived") or status.get("deleted")),
            }
        )


class _Votes(AppModel):
    yes: int = 0
    no: int = 0
    maybe: int = 0


class PollOption(AppModel):
    id: int
    text: str = ""
    order: int = 0
    votes: _Votes = Field(default_factory=_Votes)

    _plain = field_validator("text", mode="before")(plain_text)


class PollVote(AppModel):
    option_id: int = Field(alias="optionId")
    answer: str = ""
    user: str = ""

    @field_validator("user", mode="before")
    @classmethod
    def _user(cls, value: Any) -> str:
        return plain_text(value.get("userId")) if isinstance(value, dict) else plain_text(value)


_OPTIONS = TypeAdapter(list[PollOption])
_VOTES = TypeAdapter(list[PollVote])


class PollsClient:
    """The Polls API for one user, in the dialect its release speaks."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None, ocs: OCSClient) -> None:
        self._ocs = ocs
        # Polls' own words: OCS `meta.message`, or the REST `{"error": ...}`/`{"message": ...}`
        kind: dict[str, Any] = {
            "app": "Polls",
            "missing": POLLS_MISSING,
            "words": (("ocs", "meta", "message"), ("error",), ("message",)),
            "headers": OCS_HEADERS,
            "special": _special,
        }
        self._ocs_api = AppAPI(http, credential, OCS, params={"format": "json"}, **kind)
        self._rest_api = AppAPI(http, credential, REST, **kind)
        self._modern: bool | None = None

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential, nextcloud.ocs)

    @property
    def host(self) -> str:
        return self._ocs_api.host

    async def _is_modern(self) -> bool:
        if self._modern is None:
            self._modern = dialects.get(self.host)
        if self._modern is None:
            caps = (await self._ocs.recent_capabilities()).get("capabilities", {})
            self._modern = isinstance(caps, dict) and isinstance(caps.get("polls"), dict)
            dialects.put(self.host, self._modern)
        return self._modern

    async def _call(self, method: str, path: str, what: str, body: Any = None) -> dict[str, Any]:
        modern = await self._is_modern()
        api = self._ocs_api if modern else self._rest_api
        payload = await api.call(method, path, what, body=body)
        if modern:
            payload = self._ocs_api.ocs_data(payload, what)
        if not isinstance(payload, dict):
            raise InvalidResponse(self.host, f"Polls answered {what} in an unknown shape")
        return payload

    def _poll(self, raw: Any) -> Poll:
        try:
            return Poll.read(raw)
        except (ValueError, ValidationError):
            raise InvalidResponse(self.host, "Polls' answer is not a poll") from None

    async def polls(self) -> list[Poll]:
        found = (await self._call("GET", "/polls", "the polls")).get("polls")
        return [self._poll(raw) for raw in found] if isinstance(found, list) else []

    async def poll(self, poll_id: int) -> Poll:
        return self._poll((await self._call("GET", f"/poll/{poll_id}", f"poll {poll_id}")).get("poll"))

    async def create(self, title: str) -> Poll:
        made = await self._call("POST", "/poll", "the poll", body={"title": title, "type": "textPoll"})
        return self._poll(made.get("poll"))

    async def add_option(self, poll_id: int, text: str) -> PollOption:
        """Add an option; Polls answers it (9.2 and 7.5 alike: `{"option": {...}}`), so a new poll's
        options need no read afterwards."""
        body = {"option": {"text": text}} if await self._is_modern() else {"pollOptionText": text}
        made = await self._call("POST", f"/poll/{poll_id}/option", f"poll {poll_id}", body=body)
        try:
            return PollOption.model_validate(made.get("option"))
        except ValidationError:
            raise InvalidResponse(self.host, "Polls did not answer the new option") from None

    async def options(self, poll_id: int) -> list[PollOption]:
        found = (await self._call("GET", f"/poll/{poll_id}/options", f"poll {poll_id}")).get("options")
        try:
            return _OPTIONS.validate_python(found if isinstance(found, list) else [])
        except ValidationError:
            raise InvalidResponse(self.host, "Polls' answer is not a list of options") from None

    async def votes(self, poll_id: int) -> list[PollVote]:
        found = (await self._call("GET", f"/poll/{poll_id}/votes", f"poll {poll_id}")).get("votes")
        try:
            return _VOTES.validate_python(found if isinstance(found, list) else [])
        except ValidationError:
            raise InvalidResponse(self.host, "Polls' answer is not a list of votes") from None

    async def vote(self, option_id: int, answer: str) -> None:
        await self._call("PUT", f"/option/{option_id}/vote/{answer}", f"option {option_id}")

    async def delete(self, poll_id: int) -> None:
        await self._call("DELETE", f"/poll/{poll_id}", f"poll {poll_id}")
