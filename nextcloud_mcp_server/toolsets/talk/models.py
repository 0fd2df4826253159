"""What Talk answers, as typed values: conversations, participants, messages (their
`{placeholder}` text filled in from `messageParameters`) and mention suggestions. Every field is
bounded, whatever the answer holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.numbers import json_whole

__all__ = [
    "KINDS",
    "Conversation",
    "Mentionable",
    "Message",
    "MessagePage",
    "Participant",
    "conversation_of",
    "message_of",
    "resolve",
]

KINDS = {1: "one-to-one", 2: "group", 3: "public", 4: "changelog", 5: "former one-to-one", 6: "note-to-self"}
_CHAT_PERMISSION = 128  # Attendee::PERMISSIONS_CHAT
_PLACEHOLDER = re.compile(r"\{([a-z0-9_-]{1,64})\}", re.I)
_MENTIONS = frozenset({"user", "guest", "group", "user-group", "call", "circle", "email", "federated_user"})


@dataclass(frozen=True)
class Conversation:
    token: str
    name: str
    kind: str
    unread: int
    mentioned: bool
    last_activity: int  # Unix time
    can_post: bool
    with_user: str | None  # the other user of a one-to-one conversation
    actor_type: str  # the user themselves, as a participant of it
    actor_id: str
    # who else may read it, beyond its participants (ADR 0058)
    listable: int = 0  # 0 participants only, 1 every user of the instance, 2 also guests
    object_type: str = ""  # a conversation bound to a file, an event, a phone call, ...
    object_id: str = ""
    remote: str = ""  # the server of a federated conversation


@dataclass(frozen=True)
class Participant:
    actor_type: str  # users, groups, guests, emails, circles, federated_users
    actor_id: str
    name: str


@dataclass(frozen=True)
class Message:
    id: int
    author_id: str
    author_type: str
    author_name: str
    timestamp: int
    text: str  # placeholders resolved: mentions as @Name, files by name
    system: bool
    reply_to: int | None
    reactions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class MessagePage:
    messages: list[Message]  # oldest first
    cursor: int | None  # Talk's X-Chat-Last-Given: where the next page starts


@dataclass(frozen=True)
class Mentionable:
    id: str  # what goes between the quotes of @"..."
    name: str
    kind: str  # users, groups, calls (everyone), guests, ...


def _int(value: Any) -> int:
    """A number from the answer, 0 for anything else (a hostile or newer Talk)."""
    try:
        return max(-(2**63), min(int(value or 0), 2**63 - 1))
    except (TypeError, ValueError, OverflowError):
        return 0


def resolve(text: str, parameters: Any) -> str:
    """Talk's `{placeholder}` text with its `messageParameters` filled in: mentions as `@Name`,
    other rich objects (files, polls, locations) by their name; unknown placeholders stay."""
    if not isinstance(parameters, dict) or not parameters:
        return text

    def fill(match: re.Match[str]) -> str:
        value = parameters.get(match.group(1))
        if not isinstance(value, dict):
            return match.group(0)
        name = str(value.get("name") or value.get("id") or "")[:200]
        mention = match.group(1).startswith("mention-") and value.get("type") in _MENTIONS
        return f"@{name}" if mention else name

    return _PLACEHOLDER.sub(fill, text)


def conversation_of(item: Any, host: str) -> Conversation:
    if not isinstance(item, dict) or not isinstance(item.get("token"), str):
        raise InvalidResponse(host, "a Talk conversation without a token")
    kind = KINDS.get(_int(item.get("type")), "other")
    permissions = _int(item.get("permissions"))
    return Conversation(
        token=item["token"],
        name=str(item.get("displayName") or item.get("name") or "")[:255],
        kind=kind,
        unread=_int(item.get("unreadMessages")),
        mentioned=bool(item.get("unreadMention")),
        last_activity=_int(item.get("lastActivity")),
        can_post=not item.get("readOnly") and bool(permissions & _CHAT_PERMISSION),
        with_user=str(item.get("name"))[:64] if kind == "one-to-one" and item.get("name") else None,
        actor_type=str(item.get("actorType") or ""),
        actor_id=str(item.get("actorId") or ""),
        listable=_int(item.get("listable")),
        object_type=str(item.get("objectType") or "")[:64],
        object_id=str(item.get("objectId") or "")[:200],
        remote=str(item.get("remoteServer") or "")[:200],
    )


def message_of(item: dict[str, Any]) -> Message:
    """A message; raises KeyError or ValueError without a whole-number id (1e400 raised
    OverflowError from `int()`, 1.5 was read as 1)."""
    parent = item.get("parent")
    reactions = item.get("reactions")
    message_id = json_whole(item["id"])
    if message_id is None:
        raise ValueError("a Talk message id that is no whole number")
    return Message(
        id=message_id,
        author_id=str(item.get("actorId") or "")[:64],
        author_type=str(item.get("actorType") or "")[:32],
        author_name=str(item.get("actorDisplayName") or item.get("actorId") or "")[:200],
        timestamp=_int(item.get("timestamp")),
        text=resolve(str(item.get("message") or ""), item.get("messageParameters")),
        system=item.get("messageType") == "system",
        reply_to=_int(parent["id"]) or None if isinstance(parent, dict) and "id" in parent else None,
        reactions={str(k)[:32]: _int(v) for k, v in list(reactions.items())[:50]}
        if isinstance(reactions, dict)
        else {},
    )
