"""The Mail app's API for other programs (Mail 4 and later; seen on Nextcloud 34 with Mail 5.11).

Routes under `/index.php/apps/mail/api/`, called with the user's credential and
`OCS-APIRequest: true` (without it Nextcloud wants a browser session and its CSRF token, which is
all Mail 3 on Nextcloud 29 accepts: there the toolset says so and does nothing):
- `accounts` lists the user's mail accounts; `mailboxes?accountId=` their mailboxes;
- `messages?mailboxId=&filter=&limit=&cursor=` lists a mailbox newest first from Mail's cache,
  which `POST mailboxes/{id}/sync` fills (until then Mail answers "mailbox N is not cached"; the
  sync itself answers 428 until it is asked once with `init`);
  `filter` is Mail's search string (`subject:word from:a%40b is:unread` and free words);
- `messages/{id}/source` answers `{"source": "<the RFC 5322 source>"}`;
- `drafts` (POST) saves a draft; `outbox` (POST) creates a message to send, `outbox/{id}` (GET)
  reads it back, (POST) sends it now, (DELETE) removes it. Mail's own answers are wrapped as
  `{"status": "success", "data": ...}` for drafts and outbox, bare for the rest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self, TypeVar

from pydantic import BaseModel, Field, ValidationError

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
)
from nextcloud_mcp_server.nextcloud.http import json_body
from nextcloud_mcp_server.nextcloud.models import FrozenAppModel, UnixTime
from nextcloud_mcp_server.nextcloud.ocs import OCS_HEADERS

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.auth import Credential
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
    from nextcloud_mcp_server.outbound.answers import Answer

__all__ = [
    "MAIL_UNAVAILABLE",
    "Account",
    "Address",
    "MailClient",
    "Mailbox",
    "MessageHead",
    "Outgoing",
]

_M = TypeVar("_M", bound=BaseModel)
API = "/index.php/apps/mail/api"
# a message to send is created due far in the future, so Mail's background job never sends it
# before this server has read it back and compared it with what the human approved
NOT_DUE = 4_102_444_800  # 2100-01-01
MAIL_UNAVAILABLE = (
    "the Mail app (4.0 or later) is not available for you on this Nextcloud: it is missing, not "
    "enabled for you, or too old to be used by other programs (Mail 3 on Nextcloud 29 accepts only "
    "its web page); an administrator enables it under Apps"
)


def _special(exc: NextcloudHTTPError, said: str, path: str) -> NextcloudError:
    """412 "CSRF check failed": a Mail before 4 wants its web page's session; no account list at
    all: no Mail. Anything else is Nextcloud's error as it is (Mail's refusals say nothing more)."""
    if exc.status == 412 or (exc.status == 404 and path == "accounts"):
        return NotFound(exc.host, MAIL_UNAVAILABLE, status=exc.status)
    return exc


class Account(FrozenAppModel):
    id: int = Field(alias="accountId")
    name: str = ""
    email: str = Field(default="", alias="emailAddress")


class Mailbox(FrozenAppModel):
    id: int = Field(alias="databaseId")
    name: str
    special_use: list[str] = Field(default_factory=list, alias="specialUse")
    unread: int = 0


class Address(FrozenAppModel):
    label: str | None = None
    email: str = ""


class _Flags(FrozenAppModel):
    seen: bool = False
    flagged: bool = False
    has_attachments: bool = Field(default=False, alias="hasAttachments")


class MessageHead(FrozenAppModel):
    id: int = Field(alias="databaseId")
    mailbox_id: int = Field(alias="mailboxId")
    subject: str = ""
    date: UnixTime = Field(default=0, alias="dateInt")
    sender: list[Address] = Field(default_factory=list, alias="from")
    to: list[Address] = Field(default_factory=list)
    cc: list[Address] = Field(default_factory=list)
    flags: _Flags = Field(default_factory=_Flags)
    preview: str | None = Field(default=None, alias="previewText")


class Outgoing(FrozenAppModel):
    """A message Mail keeps locally: a draft or one in the outbox."""

    id: int
    account_id: int = Field(alias="accountId")
    subject: str = ""
    body: str | None = Field(default=None, alias="bodyPlain")
    is_html: bool = Field(default=False, alias="isHtml")
    to: list[Address] = Field(default_factory=list)
    cc: list[Address] = Field(default_factory=list)
    bcc: list[Address] = Field(default_factory=list)
    attachments: list[Any] = Field(default_factory=list)


class MailClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._api = AppAPI(
            http,
            credential,
            f"{API}/",
            app="Mail",
            missing=MAIL_UNAVAILABLE,
            words=(),
            headers=OCS_HEADERS,
            special=_special,
        )

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._api.host

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        data: Any = None,
        accept: frozenset[int] = frozenset(),
    ) -> Answer:
        try:
            return await self._api.request(method, path, params=params, body=data, accept=accept)
        except NextcloudHTTPError as exc:
            raise self._api.refusal(exc, path) from None

    async def _call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, data: Any = None
    ) -> Any:
        answer = await self._send(method, path, params=params, data=data)
        found = json_body(answer, self.host)
        if (
            isinstance(found, dict)
            and found.get("status") in ("success", "fail", "error")
            and "data" in found
        ):
            if found["status"] != "success":
                raise InvalidResponse(self.host, f"Mail refused {method} {path.split('?')[0]}")
            return found["data"]
        return found

    def _parse(self, model: type[_M], value: Any, what: str) -> _M:
        try:
            return model.model_validate(value)
        except ValidationError:
            raise InvalidResponse(self.host, f"Mail answered {what} in an unexpected shape") from None

    async def accounts(self) -> list[Account]:
        found = await self._call("GET", "accounts")
        if not isinstance(found, list):
            raise InvalidResponse(self.host, "Mail's account list is not a list")
        return [self._parse(Account, a, "an account") for a in found]

    async def mailboxes(self, account_id: int) -> list[Mailbox]:
        found = await self._call("GET", "mailboxes", params={"accountId": account_id})
        boxes = found.get("mailboxes") if isinstance(found, dict) else None
        if not isinstance(boxes, list):
            raise InvalidResponse(self.host, "Mail's mailbox list has no mailboxes")
        return [self._parse(Mailbox, b, "a mailbox") for b in boxes]

    async def sync(self, mailbox_id: int) -> None:
        """Bring Mail's cache of the mailbox up to date with the IMAP server: what changed since
        the last sync, or (428: never synced) the whole mailbox once. 202: Mail goes on in the
        background, and lists what it has so far."""
        path = f"mailboxes/{mailbox_id}/sync"
        answer = await self._send("POST", path, data={"init": False}, accept=frozenset({202, 428}))
        if answer.status_code == 428:
            await self._send("POST", path, data={"init": True}, accept=frozenset({202}))

    async def messages(
        self, mailbox_id: int, *, filter: str, limit: int, cursor: int | None
    ) -> list[MessageHead]:
        params: dict[str, Any] = {"mailboxId": mailbox_id, "limit": limit, "filter": filter}
        if cursor is not None:
            params["cursor"] = cursor
        found = await self._call("GET", "messages", params=params)
        if not isinstance(found, list):
            raise InvalidResponse(self.host, "Mail's message list is not a list")
        return [self._parse(MessageHead, m, "a message") for m in found]

    async def message(self, message_id: int) -> MessageHead:
        return self._parse(MessageHead, await self._call("GET", f"messages/{message_id}"), "a message")

    async def source(self, message_id: int) -> bytes:
        found = await self._call("GET", f"messages/{message_id}/source")
        source = found.get("source") if isinstance(found, dict) else None
        if not isinstance(source, str):
            raise InvalidResponse(self.host, "Mail's message source has no text")
        return source.encode("utf-8", errors="surrogateescape")

    @staticmethod
    def _letter(
        account_id: int, to: list[str], cc: list[str], subject: str, body: str, **more: Any
    ) -> dict[str, Any]:
        return {
            "accountId": account_id,
            "subject": subject,
            "bodyPlain": body,
            "bodyHtml": None,
            "editorBody": body,
            "isHtml": False,
            "smimeSign": False,
            "smimeEncrypt": False,
            "to": [{"label": e, "email": e} for e in to],
            "cc": [{"label": e, "email": e} for e in cc],
            "bcc": [],
            "attachments": [],
            **more,
        }

    async def create_draft(
        self, account_id: int, to: list[str], cc: list[str], subject: str, body: str
    ) -> int:
        found = await self._call("POST", "drafts", data=self._letter(account_id, to, cc, subject, body))
        draft_id = found.get("id") if isinstance(found, dict) else None
        if not isinstance(draft_id, int):
            raise InvalidResponse(
                self.host, f"Mail saved the draft but answered no id: {json.dumps(found)[:200]}"
            )
        return draft_id

    async def create_outgoing(
        self, account_id: int, to: list[str], cc: list[str], subject: str, body: str, *, draft_id: int | None
    ) -> Outgoing:
        """A message in the outbox, not due: nothing sends it until `send`."""
        letter = self._letter(account_id, to, cc, subject, body, sendAt=NOT_DUE, draftId=draft_id)
        return self._parse(Outgoing, await self._call("POST", "outbox", data=letter), "an outbox message")

    async def outgoing(self, outbox_id: int) -> Outgoing:
        return self._parse(Outgoing, await self._call("GET", f"outbox/{outbox_id}"), "an outbox message")

    async def send(self, outbox_id: int) -> None:
        await self._call("POST", f"outbox/{outbox_id}")

    async def delete_outgoing(self, outbox_id: int) -> None:
        await self._call("DELETE", f"outbox/{outbox_id}")
