"""Polls toolset: the Polls app's text polls. A poll is created with its options in one call;
a vote is yes, no or maybe on one option; deleting a poll asks, bound to what was shown (its
options and their votes)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._shown import bound_version, shown_text
from nextcloud_mcp_server.toolsets.polls import DECLARATION
from nextcloud_mcp_server.toolsets.polls.client import Poll, PollOption, PollsClient, PollVote
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("polls")

PollId = Annotated[int, Field(ge=1, le=2**53, description="The poll's id, as listed")]
MAX_POLLS = 200
MAX_OPTIONS = 100
MAX_VOTES = 500  # listed in one answer


class PollOut(BaseModel):
    id: int
    title: str
    owner: str
    created: str = Field(description="ISO 8601 UTC")
    archived: bool


class PollList(BaseModel):
    polls: list[PollOut]
    total: int


class OptionOut(BaseModel):
    id: int
    text: str
    yes: int
    no: int
    maybe: int


class VoteOut(BaseModel):
    option_id: int
    user: str
    answer: str


class PollDetail(BaseModel):
    id: int
    title: str
    description: str
    owner: str
    options: list[OptionOut]
    votes: list[VoteOut]
    votes_cut: bool = Field(description=f"True when more than {MAX_VOTES} votes exist")


class DeletedPoll(BaseModel):
    id: int
    title: str


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(max(seconds, 0), 253402300799)))


def _out(poll: Poll) -> PollOut:
    return PollOut(
        id=poll.id,
        title=poll.title[:300],
        owner=poll.owner,
        created=_iso(poll.created),
        archived=poll.archived,
    )


def _detail(poll: Poll, options: list[PollOption], votes: list[PollVote]) -> PollDetail:
    return PollDetail(
        id=poll.id,
        title=poll.title[:300],
        description=poll.description[:4_000],
        owner=poll.owner,
        options=[
            OptionOut(id=o.id, text=o.text[:500], yes=o.votes.yes, no=o.votes.no, maybe=o.votes.maybe)
            for o in sorted(options, key=lambda o: (o.order, o.id))[:MAX_OPTIONS]
        ],
        votes=[VoteOut(option_id=v.option_id, user=v.user, answer=v.answer) for v in votes[:MAX_VOTES]],
        votes_cut=len(votes) > MAX_VOTES,
    )


async def _read(client: PollsClient, poll_id: int) -> tuple[Poll, list[PollOption], list[PollVote]]:
    return await client.poll(poll_id), await client.options(poll_id), await client.votes(poll_id)


def checked_options(options: list[str]) -> list[str]:
    """The options as given, trimmed; empty, hidden-character or repeated ones refused."""
    out = [option.strip() for option in options]
    if not out or any(not option for option in out):
        raise InvalidInput("give at least one option, each with visible text")
    for option in out:
        check_visible(option, "an option")
    if len(set(out)) != len(out):
        raise InvalidInput("each option may be given once")
    return out


@toolset.tool(title="List polls", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_polls_list_polls(ctx: Context[Any, Any]) -> PollList:
    """The polls you own or take part in, newest first; ids for nc_polls_get_poll."""
    nc = await nextcloud_for(ctx)
    polls = sorted(await nc.api(PollsClient).polls(), key=lambda p: (p.created, p.id), reverse=True)
    return PollList(polls=[_out(p) for p in polls[:MAX_POLLS]], total=len(polls))


@toolset.tool(title="Get a poll", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_polls_get_poll(poll_id: PollId, ctx: Context[Any, Any]) -> PollDetail:
    """A poll with its options, their yes/no/maybe counts, and the votes."""
    nc = await nextcloud_for(ctx)
    return _detail(*await _read(nc.api(PollsClient), poll_id))


@toolset.tool(title="Create a poll")
@require_scopes(DECLARATION.write)
async def nc_polls_create_poll(
    title: Annotated[str, Field(min_length=1, max_length=200)],
    options: Annotated[
        list[Annotated[str, Field(max_length=500)]], Field(min_length=1, max_length=MAX_OPTIONS)
    ],
    ctx: Context[Any, Any],
) -> PollDetail:
    """Create a private text poll with its options, in the order given."""
    check_visible(title, "the title")
    if not title.strip():
        raise InvalidInput("the title needs a visible character")
    texts = checked_options(options)
    nc = await nextcloud_for(ctx)
    client = nc.api(PollsClient)
    poll = await client.create(title.strip())
    # the poll and each option are as Polls answered their creation, and a new poll has no votes:
    # nothing is read back (issue 43)
    made = [await client.add_option(poll.id, text) for text in texts]
    return _detail(poll, made, [])


@toolset.tool(title="Vote in a poll", idempotent=True)
@require_scopes(DECLARATION.write)
async def nc_polls_vote(
    poll_id: PollId,
    option_id: Annotated[int, Field(ge=1, le=2**53, description="As listed by nc_polls_get_poll")],
    answer: Literal["yes", "no", "maybe"],
    ctx: Context[Any, Any],
) -> PollDetail:
    """Vote yes, no or maybe on one option of a poll (a new vote replaces your earlier one)."""
    nc = await nextcloud_for(ctx)
    client = nc.api(PollsClient)
    if option_id not in {o.id for o in await client.options(poll_id)}:
        raise InvalidInput(f"option {option_id} is not an option of poll {poll_id}: see nc_polls_get_poll")
    await client.vote(option_id, answer)
    return _detail(*await _read(client, poll_id))


@toolset.tool(title="Delete a poll", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_polls_delete_poll(poll_id: PollId, ctx: Context[Any, Any]) -> DeletedPoll:
    """Delete a poll with its options and votes. The user is asked to approve first."""
    nc = await nextcloud_for(ctx)
    client = nc.api(PollsClient)
    poll, options, votes = await _read(client, poll_id)
    target = f"the poll {shown_text(poll.title, 200)}"
    question = f"Delete {target} with its {len(options)} options and {len(votes)} votes?"
    tool = "nc_polls_delete_poll"
    version = bound_version(str(poll.id), poll, options, votes)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if asked and bound_version(str(poll.id), *await _read(client, poll_id)) != version:
        await refuse_changed(ctx, tool=tool, target=target)
    await client.delete(poll_id)
    return DeletedPoll(id=poll.id, title=poll.title[:300])
