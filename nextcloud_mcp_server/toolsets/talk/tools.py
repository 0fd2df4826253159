"""Talk toolset: Nextcloud Talk's conversations and chat (no calls). A message posted where more
than one other person reads it (a group conversation with several others, a public or listed one,
one bound to a file, bots) is published in the user's name, so the user approves it first
(docs/ADR/0044-talk-posts-ask-first.md, 0058-one-rule-for-who-will-see-this.md)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import TALK_READ, TALK_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools._audience import Audience, approve_publication, mentions
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.talk.client import MAX_MESSAGE, TalkClient, check_message, check_name
from nextcloud_mcp_server.toolsets.talk.models import Conversation, Message, Participant
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("talk")

Token = Annotated[str, Field(pattern=r"^[a-z0-9]{4,30}$", description="The conversation's token, as listed")]
MessageId = Annotated[int, Field(ge=1, le=2**53, description="A message id, as read")]
UserId = Annotated[str, Field(min_length=1, max_length=64)]
PAGE_CHARS = 80_000  # characters of message text in one answer
MESSAGE_CHARS = 4_000  # characters of one message's text at most


class ConversationSummary(BaseModel):
    token: str
    name: str
    kind: str = Field(description="one-to-one, group, public, note-to-self, changelog, ...")
    unread: int
    mentioned: bool = Field(description="An unread message mentions you")
    last_activity: str = Field(description="ISO 8601 UTC")
    can_post: bool
    with_user: str | None = Field(default=None, description="The other user's id (one-to-one)")


class ConversationList(BaseModel):
    conversations: list[ConversationSummary]
    total: int = Field(description="How many matched before limit/offset")


class ChatMessage(BaseModel):
    id: int
    author: str
    author_id: str
    time: str = Field(description="ISO 8601 UTC")
    text: str = Field(description="Mentions shown as @Name")
    system: bool = Field(default=False, description="Written by Talk (joins, renames, ...)")
    reply_to: int | None = None
    reactions: dict[str, int] = Field(default_factory=dict)
    cut: bool = Field(default=False, description="The text was shortened")


class MessagePage(BaseModel):
    token: str
    messages: list[ChatMessage] = Field(description="Oldest first")
    newest_id: int | None = Field(description="Pass as since_id for what comes after")
    oldest_id: int | None = Field(description="Pass as before_id for older messages")


class Posted(BaseModel):
    token: str
    message: ChatMessage


class Reacted(BaseModel):
    token: str
    message_id: int
    reactions: dict[str, int]


class Created(BaseModel):
    token: str
    name: str
    kind: str
    not_added: list[str] = Field(default_factory=list, description="Users that could not be added")


class Mention(BaseModel):
    id: str
    name: str
    kind: str = Field(description="users, groups, calls (everyone), guests, ...")
    write: str = Field(description="The text that mentions them in a message")


class Person(BaseModel):
    id: str
    name: str
    kind: str = Field(description="users, groups, guests, emails, circles, federated_users")


class ParticipantList(BaseModel):
    token: str
    participants: list[Person]
    total: int


class MentionList(BaseModel):
    mentionable: list[Mention]


def _iso(timestamp: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(0, min(timestamp, 253402300799))))


def _summary(room: Conversation) -> ConversationSummary:
    return ConversationSummary(
        token=room.token,
        name=room.name,
        kind=room.kind,
        unread=room.unread,
        mentioned=room.mentioned,
        last_activity=_iso(room.last_activity),
        can_post=room.can_post,
        with_user=room.with_user,
    )


def _chat(message: Message, limit: int = MESSAGE_CHARS) -> ChatMessage:
    text = message.text
    return ChatMessage(
        id=message.id,
        author=message.author_name,
        author_id=message.author_id,
        time=_iso(message.timestamp),
        text=text if len(text) <= limit else text[:limit] + "…",
        system=message.system,
        reply_to=message.reply_to,
        reactions=message.reactions,
        cut=len(text) > limit,
    )


async def _talk(ctx: Context[Any, Any]) -> TalkClient:
    return (await nextcloud_for(ctx)).api(TalkClient)


@toolset.tool(title="List Talk conversations", read_only=True)
@require_scopes(TALK_READ)
async def nc_talk_list_conversations(
    ctx: Context[Any, Any],
    query: Annotated[str | None, Field(max_length=200, description="Only names containing this")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> ConversationList:
    """List your Talk conversations, most recently active first: token, name, kind, unread count."""
    rooms = await (await _talk(ctx)).conversations()
    if query and query.strip():
        wanted = query.strip().casefold()
        rooms = [r for r in rooms if wanted in r.name.casefold()]
    rooms.sort(key=lambda r: (-r.last_activity, r.token))
    page = rooms[offset : offset + limit]
    return ConversationList(conversations=[_summary(r) for r in page], total=len(rooms))


@toolset.tool(title="Read Talk messages", read_only=True)
@require_scopes(TALK_READ)
async def nc_talk_read_messages(
    token: Token,
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=100)] = 30,
    since_id: Annotated[int | None, Field(ge=0, le=2**53, description="Only messages after it")] = None,
    before_id: Annotated[int | None, Field(ge=1, le=2**53, description="Only messages before it")] = None,
) -> MessagePage:
    """Read a conversation's latest messages, or those after since_id (new ones), or before
    before_id (older ones). Never waits; does not mark them read."""
    page = await (await _talk(ctx)).messages(token, limit=limit, since_id=since_id, before_id=before_id)
    each = min(MESSAGE_CHARS, max(300, PAGE_CHARS // max(1, len(page.messages))))
    ids = [m.id for m in page.messages]
    # Talk's cursor also counts the entries it hides (reactions, edits): it is where to go on from.
    newest: int | None = max(ids) if ids else None
    oldest: int | None = min(ids) if ids else None
    if since_id is not None:
        newest = max(newest or 0, page.cursor or 0, since_id)
    elif page.cursor:
        oldest = min(oldest or page.cursor, page.cursor)
    return MessagePage(
        token=token, messages=[_chat(m, each) for m in page.messages], newest_id=newest, oldest_id=oldest
    )


def _others(room: Conversation, people: list[Participant]) -> list[Participant]:
    return [p for p in people if (p.actor_type, p.actor_id) != (room.actor_type, room.actor_id)]


_OBJECTS = {
    "file": "everyone who can open the file it belongs to",
    "event": "everyone invited to the event it belongs to",
    "phone": "a phone call's participants",
    "room": "the participants of its parent conversation",
}
_NOT_PEOPLE = {
    "groups": "the members of the group {}",
    "circles": "the members of the team {}",
    "guests": "the guest {}",
    "emails": "the e-mail guest {}",
    "federated_users": "the federated user {}",
}


async def _audience(talk: TalkClient, token: str, text: str, room: Conversation | None = None) -> Audience:
    """Everything Talk says about who reads a post (ADR 0058): the conversation's type, whether
    it is listed to every user, what it is bound to, federation, bots, its participants, and the
    users the text mentions who are not among them (ADR 0061). `room`: the conversation as just
    read (else it is read here, as after an approval)."""
    room = room if room is not None else await talk.conversation(token)
    others = _others(room, await talk.participants(token))
    bots = await talk.bots(token)
    where = f'the {room.kind} conversation "{room.name}"'
    people = tuple(p.name for p in others if p.actor_type == "users")
    open_to = [_NOT_PEOPLE.get(p.actor_type, "the participant {}").format(p.name) for p in others]
    open_to = [line for line, p in zip(open_to, others, strict=True) if p.actor_type != "users"]
    if room.kind == "public":
        open_to.append("anyone with its link")
    elif room.kind not in ("one-to-one", "group", "note-to-self", "former one-to-one"):
        open_to.append(f"whoever a {room.kind} conversation reaches")
    if room.listable:
        scope = "every user of this Nextcloud" + (" and guests" if room.listable > 1 else "")
        open_to.append(f"{scope} (it is listed to them: they can join and read it)")
    if room.object_type:
        open_to.append(_OBJECTS.get(room.object_type, f"everyone with access to its {room.object_type}"))
    if room.remote:
        open_to.append(f"the server {room.remote} it is federated from")
    if bots is None:
        open_to.append("any bots enabled in it (Talk lists them only to moderators)")
    elif bots:
        open_to.append(f"the bots {', '.join(bots[:5])}")
    facts = (
        f"name:{room.name}",
        f"type:{room.kind}",
        f"listable:{room.listable}",
        f"object:{room.object_type}/{room.object_id}",
        f"remote:{room.remote}",
        f"bots:{bots}",
        *(f"{p.actor_type}/{p.actor_id}" for p in others),
    )
    known = {room.actor_id, "all", *(p.actor_id for p in others if p.actor_type == "users")}
    return Audience(where, people, tuple(open_to), facts).with_mentions(mentions(text), known)


@toolset.tool(title="Post a Talk message", view=APPROVAL)
@require_scopes(TALK_WRITE)
async def nc_talk_post_message(
    token: Token,
    text: Annotated[
        str,
        Field(min_length=1, max_length=MAX_MESSAGE, description='Markdown; mention someone with @"user id"'),
    ],
    ctx: Context[Any, Any],
    reply_to: Annotated[
        int | None, Field(ge=1, le=2**53, description="Id of the message to reply to")
    ] = None,
) -> Posted:
    """Post a message (or a reply) in your name. Where it reaches more than one other person (a
    group, a public or listed conversation, bots), the user is asked to approve it first."""
    text = check_message(text)
    talk = await _talk(ctx)
    room = await talk.conversation(token)
    if not room.can_post:
        raise InvalidInput(f'you cannot post in "{room.name}" (read-only, or no chat permission)')
    await approve_publication(
        ctx,
        tool="nc_talk_post_message",
        audience=await _audience(talk, token, text, room),
        text=text,
        action="Post",
        again=lambda: _audience(talk, token, text),
    )
    posted = await talk.post(token, text, reply_to=reply_to)
    return Posted(token=token, message=_chat(posted))


@toolset.tool(title="React to a Talk message")
@require_scopes(TALK_WRITE)
async def nc_talk_react(
    token: Token,
    message_id: MessageId,
    emoji: Annotated[str, Field(min_length=1, max_length=16, description="One emoji, e.g. 👍")],
    ctx: Context[Any, Any],
) -> Reacted:
    """Add your emoji reaction to a message (one emoji); returns the message's reactions."""
    reactions = await (await _talk(ctx)).react(token, message_id, emoji.strip())
    return Reacted(token=token, message_id=message_id, reactions=reactions)


@toolset.tool(title="Create a Talk conversation")
@require_scopes(TALK_WRITE)
async def nc_talk_create_conversation(
    users: Annotated[list[UserId], Field(min_length=1, max_length=50, description="User ids to talk with")],
    ctx: Context[Any, Any],
    name: Annotated[
        str | None, Field(max_length=255, description="Makes a group conversation; omit for one-to-one")
    ] = None,
) -> Created:
    """Open the one-to-one conversation with one user (the existing one if there is one), or,
    with a name, create a group conversation with the given users."""
    talk = await _talk(ctx)
    if name is None:
        if len(users) != 1:
            raise InvalidInput("a one-to-one conversation is with one user; give a name for a group")
        room = await talk.open_one_to_one(users[0])
        return Created(token=room.token, name=room.name, kind=room.kind)
    room, missing = await talk.create_group(check_name(name), users)
    return Created(token=room.token, name=room.name, kind=room.kind, not_added=missing)


@toolset.tool(title="Who can be mentioned", read_only=True)
@require_scopes(TALK_READ)
async def nc_talk_list_mentionable(
    token: Token,
    ctx: Context[Any, Any],
    search: Annotated[str, Field(max_length=100, description="Part of a name or id; '' for all")] = "",
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> MentionList:
    """Who can be mentioned in a conversation, with the text that mentions each (@"user id")."""
    found = await (await _talk(ctx)).mentionable(token, search.strip(), limit)
    return MentionList(
        mentionable=[Mention(id=m.id, name=m.name, kind=m.kind, write=f'@"{m.id}"') for m in found]
    )


@toolset.tool(title="List Talk participants", read_only=True)
@require_scopes(TALK_READ)
async def nc_talk_list_participants(
    token: Token, ctx: Context[Any, Any], limit: Annotated[int, Field(ge=1, le=500)] = 100
) -> ParticipantList:
    """Who takes part in a conversation: users, groups, teams, guests, by name and id."""
    found = await (await _talk(ctx)).participants(token)
    shown = [Person(id=p.actor_id, name=p.name, kind=p.actor_type) for p in found[:limit]]
    return ParticipantList(token=token, participants=shown, total=len(found))


@toolset.tool(title="Mark a Talk conversation read", idempotent=True)
@require_scopes(TALK_WRITE)
async def nc_talk_mark_read(token: Token, ctx: Context[Any, Any]) -> ConversationSummary:
    """Mark a conversation read up to its newest message; answers it with its unread count."""
    return _summary(await (await _talk(ctx)).mark_read(token))
