"""Nextcloud Talk (`spreed`): conversations (OCS `apps/spreed/api/v4/room`) and their chat
(`api/v1/chat/{token}`, `api/v1/reaction/{token}/{id}`), for one user.

The same calls work on Talk 19.0.15 (Nextcloud 29) and 24.0.0-rc.1 (Nextcloud 34): a group
conversation is created empty with its name and its participants are added one by one (Talk 24
also takes them in the creation call, Talk 19 does not). Reading never long-polls (`timeout=0`)
and leaves the user's read marker, notifications and status as they were. The answers become the
bounded values of `talk_models`.

Talk answers errors in the OCS envelope with the HTTP status mirrored in `ocs.meta.statuscode`
(404 for a conversation that does not exist *or* that the user is not in); Nextcloud answers
`/ocs/v2.php/apps/spreed/...` without Talk (not installed, or disabled for this user) with a 404
"Invalid query" in the envelope, or its own HTML page.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidInput,
    InvalidResponse,
    NextcloudHTTPError,
    NotFound,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.http import Answer, NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.ocs import ocs_envelope
from nextcloud_mcp_server.numbers import ascii_number, json_whole
from nextcloud_mcp_server.toolsets.talk.models import (
    Conversation,
    Mentionable,
    Message,
    MessagePage,
    Participant,
    conversation_of,
    message_of,
)

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "MAX_MESSAGE",
    "TALK_MISSING",
    "TalkAppMissing",
    "TalkClient",
    "check_message",
    "check_name",
    "check_token",
    "check_user",
]

ROOM = "/ocs/v2.php/apps/spreed/api/v4/room"
CHAT = "/ocs/v2.php/apps/spreed/api/v1/chat"
REACTION = "/ocs/v2.php/apps/spreed/api/v1/reaction"
BOT = "/ocs/v2.php/apps/spreed/api/v1/bot"
_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}
TALK_MISSING = "Talk is not installed or not enabled for you on this Nextcloud"
MAX_MESSAGE = 32_000  # characters Talk stores of a message
MAX_ROOMS = 2_000  # conversations read from one answer
MAX_PARTICIPANTS = 5_000
_PAGES = 4  # answers read to fill one page of messages
_TOKEN = re.compile(r"[a-z0-9]{4,30}")
_USER = re.compile(r"[^\x00-\x1f\x7f/\\]{1,64}")
# Entries Talk's own clients never show: they update another message (its reactions, edits, deletion).
_HIDDEN_SYSTEM = frozenset(
    {"reaction", "reaction_deleted", "reaction_revoked", "message_deleted", "message_edited", "poll_voted"}
)


class TalkAppMissing(NotFound):
    """Nextcloud has no Talk for this user (not installed, or not enabled for them)."""


def check_token(token: str) -> str:
    cleaned = token.strip()
    if not _TOKEN.fullmatch(cleaned):
        raise InvalidInput(f"'{token[:40]}' is not a conversation token (4 to 30 of a-z and 0-9, as listed)")
    return cleaned


def check_user(user: str) -> str:
    cleaned = user.strip()
    if not _USER.fullmatch(cleaned):
        raise InvalidInput(f"'{user[:40]}' is not a user id")
    return cleaned


def check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 255 or re.search(r"[\x00-\x1f\x7f]", cleaned):
        raise InvalidInput("a conversation name has 1 to 255 characters on one line")
    return cleaned


def check_message(text: str) -> str:
    if not text.strip():
        raise InvalidInput("the message is empty")
    if len(text) > MAX_MESSAGE:
        raise InvalidInput(f"the message has {len(text)} characters; Talk takes at most {MAX_MESSAGE}")
    return text


class TalkClient:
    """Talk for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._http = http
        self._credential = credential

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> TalkClient:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._http.host

    async def _call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, data: Any = None
    ) -> tuple[Any, Answer]:
        """`ocs.data` and the answer; a refusal raises the matching error with Talk's words."""
        response = await self._http.request(
            method,
            path,
            credential=self._credential,
            params={"format": "json", **(params or {})},
            headers=_HEADERS,
            json=data,
            accept={304, 400, 403, 404, 412, 413},
        )
        if response.status_code == 304:
            return None, response
        if not response.content.lstrip().startswith(b"{"):
            if response.status_code == 404:  # Nextcloud's own page: no Talk here
                raise TalkAppMissing(self.host, TALK_MISSING, status=404)
            raise InvalidResponse(self.host, f"Talk answered HTTP {response.status_code} without JSON")
        code, message, body = ocs_envelope(
            json_body(response, self.host), self.host, response.status_code, "the Talk answer"
        )
        if code in (100, 200, 201, 202):
            return body, response
        said = message.strip()
        if code in (404, 998) and "invalid query" in said.lower():  # OCS found no such route
            raise TalkAppMissing(self.host, TALK_MISSING, status=404)
        reason = body.get("error") if isinstance(body, dict) else None
        detail = said or (f"Talk says: {str(reason)[:100]}" if reason else "")
        raise error_for_status(self.host, code, "", _message_for(code, detail))

    async def conversations(self) -> list[Conversation]:
        data, _ = await self._call("GET", ROOM, params={"noStatusUpdate": 1, "includeLastMessage": "false"})
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the Talk conversations are not a list")
        return [conversation_of(item, self.host) for item in data[:MAX_ROOMS]]

    async def conversation(self, token: str) -> Conversation:
        data, _ = await self._call("GET", f"{ROOM}/{check_token(token)}")
        return conversation_of(data, self.host)

    async def participants(self, token: str) -> list[Participant]:
        data, _ = await self._call("GET", f"{ROOM}/{check_token(token)}/participants")
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the participants are not a list")
        return [
            Participant(
                actor_type=str(p.get("actorType") or ""),
                actor_id=str(p.get("actorId") or "")[:64],
                name=str(p.get("displayName") or p.get("actorId") or "")[:200],
            )
            for p in data[:MAX_PARTICIPANTS]
            if isinstance(p, dict)
        ]

    async def mark_read(self, token: str) -> Conversation:
        """Mark the conversation read up to its newest message (Talk's read marker; the caller's
        notifications of it are cleared by Talk); answers the conversation as it is then."""
        data, _ = await self._call("POST", f"{CHAT}/{check_token(token)}/read")
        return conversation_of(data, self.host)

    async def bots(self, token: str) -> list[str] | None:
        """The names of the bots enabled in a conversation (each reads every message), or None
        when Talk does not tell this user (only moderators may list them)."""
        try:
            data, _ = await self._call("GET", f"{BOT}/{check_token(token)}")
        except (NextcloudHTTPError, InvalidResponse):
            return None  # not a moderator here (403), or a Talk without bots
        if not isinstance(data, list):
            return None
        return sorted(
            str(b.get("name") or b.get("id") or "a bot")[:100]
            for b in data[:100]
            if isinstance(b, dict) and _int_state(b.get("state")) != 0
        )

    async def messages(
        self, token: str, *, limit: int, since_id: int | None = None, before_id: int | None = None
    ) -> MessagePage:
        """The newest `limit` messages, those after `since_id`, or those before `before_id`.
        Entries Talk's clients hide (reactions, edits) do not count: a page short of them is
        filled from further pages, a few at most."""
        if since_id is not None and before_id is not None:
            raise InvalidInput("give since_id or before_id, not both")
        path, future = f"{CHAT}/{check_token(token)}", since_id is not None
        limit = max(1, min(limit, 200))
        known = since_id if future else before_id
        found: list[Message] = []
        cursor: int | None = since_id
        for _ in range(_PAGES):
            wanted = limit - len(found)
            got, given, more = await self._chat_page(path, future=future, limit=wanted, known=known)
            found.extend(got)
            cursor = given if given is not None else cursor
            if not more or given == known or len(found) >= limit:
                break
            known = given  # a full answer with hidden entries in it: go on from where it ended
        found.sort(key=lambda m: m.id)
        return MessagePage(found[-limit:] if not future else found[:limit], cursor)

    async def _chat_page(
        self, path: str, *, future: bool, limit: int, known: int | None
    ) -> tuple[list[Message], int | None, bool]:
        """One answer's visible messages, Talk's cursor, and whether there may be more."""
        params: dict[str, Any] = {
            "lookIntoFuture": int(future),
            "limit": limit,
            "timeout": 0,  # never wait for new messages
            "setReadMarker": 0,
            "markNotificationsAsRead": 0,
            "noStatusUpdate": 1,
        }
        if known:
            params["lastKnownMessageId"] = known
        data, response = await self._call("GET", path, params=params)
        if data is None:  # 304: nothing newer
            return [], None, False
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the Talk messages are not a list")
        try:
            found = [
                message_of(item)
                for item in data[:200]
                if isinstance(item, dict) and str(item.get("systemMessage") or "") not in _HIDDEN_SYSTEM
            ]
        except (KeyError, TypeError, ValueError):
            raise InvalidResponse(self.host, "a Talk message without a numeric id") from None
        given = response.headers.get("X-Chat-Last-Given", "")
        cursor = ascii_number(given)
        return found, cursor, len(data) >= limit and cursor is not None

    async def post(self, token: str, text: str, *, reply_to: int | None = None) -> Message:
        body: dict[str, Any] = {"message": check_message(text)}
        if reply_to is not None:
            body["replyTo"] = reply_to
        try:
            data, _ = await self._call("POST", f"{CHAT}/{check_token(token)}", data=body)
        except NextcloudHTTPError as exc:
            if exc.status == 400 and reply_to is not None:
                raise InvalidInput(
                    f"message {reply_to} is not in this conversation or takes no reply"
                ) from None
            raise
        try:
            return message_of(data if isinstance(data, dict) else {})
        except (KeyError, TypeError, ValueError):
            raise InvalidResponse(self.host, "Talk did not return the posted message") from None

    async def react(self, token: str, message_id: int, emoji: str) -> dict[str, int]:
        """Add the user's reaction; returns the message's reactions (emoji -> count) after it."""
        try:
            data, _ = await self._call(
                "POST", f"{REACTION}/{check_token(token)}/{message_id}", data={"reaction": emoji}
            )
        except NextcloudHTTPError as exc:
            if exc.status == 400:
                raise InvalidInput(f"Talk takes one emoji as a reaction, not '{emoji[:20]}'") from None
            raise
        if isinstance(data, dict):
            return {str(k)[:32]: len(v) if isinstance(v, list) else 0 for k, v in list(data.items())[:50]}
        return {}

    async def open_one_to_one(self, user: str) -> Conversation:
        """The one-to-one conversation with `user`: the existing one, or a new one."""
        try:
            data, _ = await self._call("POST", ROOM, data={"roomType": 1, "invite": check_user(user)})
        except NotFound as exc:
            if isinstance(exc, TalkAppMissing):
                raise
            raise InvalidInput(f"there is no user '{user[:64]}' to talk with") from None
        return conversation_of(data, self.host)

    async def create_group(self, name: str, users: list[str]) -> tuple[Conversation, list[str]]:
        """A new group conversation with `users` added; returns it and the users that could not be."""
        wanted = list(dict.fromkeys(check_user(u) for u in users))
        data, _ = await self._call("POST", ROOM, data={"roomType": 2, "roomName": check_name(name)})
        room = conversation_of(data, self.host)
        missing = []
        for user in wanted:
            try:
                await self._call(
                    "POST",
                    f"{ROOM}/{room.token}/participants",
                    data={"newParticipant": user, "source": "users"},
                )
            except NotFound:
                missing.append(user)
        return room, missing

    async def mentionable(self, token: str, search: str, limit: int) -> list[Mentionable]:
        params = {"search": search, "limit": max(1, min(limit, 100))}
        data, _ = await self._call("GET", f"{CHAT}/{check_token(token)}/mentions", params=params)
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the mention suggestions are not a list")
        return [
            Mentionable(
                id=str(item.get("mentionId") or item.get("id") or "")[:100],
                name=str(item.get("label") or item.get("id") or "")[:200],
                kind=str(item.get("source") or "")[:32],
            )
            for item in data[:100]
            if isinstance(item, dict)
        ]


def _int_state(value: Any) -> int:
    state = json_whole(value)
    return 1 if state is None else state  # an unknown state counts as enabled


def _message_for(code: int, said: str) -> str | None:
    """Our sentence for a Talk refusal (None: the default for the status), with Talk's words."""
    base = {
        400: "Talk refused the request (400)",
        403: "Talk does not allow this here (403): the conversation may be read-only or you may lack "
        "the permission",
        404: "no such conversation or message for you (404); list the conversations for their tokens",
        413: "the message is too long for Talk (413)",
    }.get(code)
    if base is None:
        return None
    return f"{base}; {said[:300]}" if said else base
