"""The one rule for "who will see this" (ADR 0058), for every tool that publishes text in the
user's name: a Talk post, a Deck comment, a file comment (and a new tag name, which every user
of the instance sees).

A tool reads everything Nextcloud says about who reads the text and builds an `Audience`:
- `people`: readers named one by one (users), besides the caller;
- `open_to`: reach that is not a list of people: a group, a team, a public link, a conversation
  listed to every user, one bound to a file or an event, bots and bridges, guests, federated
  users, an owner's shares the caller cannot see;
- `facts`: every fact read, whether it widens the reach or not (room type, listable, object,
  bots, the people), so that any change of them voids an approval.

`approve_publication` asks the human when the text reaches beyond the caller and one other
named person (the one-to-one rule of ADR 0044, now the rule everywhere), showing the whole text
(`_shown.shown_text`) and the audience; after the answer it reads the audience again and refuses
when any fact changed (a conversation made public or listable meanwhile, someone added, a share
created). A text that reaches nobody beyond that one person is posted without asking.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._shown import digest, shown_text

__all__ = ["Audience", "approve_publication", "mentions"]

SHOWN_PEOPLE = 8  # people named in a question; the rest are counted
# `@alice`, `@"alice smith"`, `@bob@cloud.example` (a federated user)
_MENTION = re.compile(r'@"([^"\n]{1,64})"|(?<![\w@])@([\w.\-]{1,64}(?:@[\w.\-]{1,64})?)')


def mentions(text: str) -> list[str]:
    """The user ids a text mentions, at most 50 (Deck and file comments notify them)."""
    return [quoted or plain for quoted, plain in _MENTION.findall(text)][:50]


@dataclass(frozen=True)
class Audience:
    """Who reads a text published at `where` (see the module's docstring)."""

    where: str  # 'the group conversation "Project"', 'the comments of /Reports/q3.txt'
    people: tuple[str, ...] = ()
    open_to: tuple[str, ...] = ()
    facts: tuple[str, ...] = field(default=())

    @property
    def publishes(self) -> bool:
        """Whether it reaches beyond the caller and one other named person."""
        return bool(self.open_to) or len(set(self.people)) > 1

    def fingerprint(self) -> str:
        members = "\n".join(sorted({*self.facts, *(f"p:{p}" for p in self.people), *self.open_to}))
        return hashlib.sha256(members.encode()).hexdigest()[:32]

    def describe(self) -> str:
        """'2 people: Admin, Bob; and every user of this Nextcloud (it is listed to all users)'"""
        people = sorted(set(self.people))
        parts = []
        if people:
            named = ", ".join(people[:SHOWN_PEOPLE]) + (
                f" and {len(people) - SHOWN_PEOPLE} more" if len(people) > SHOWN_PEOPLE else ""
            )
            parts.append(f"{len(people)} {'person' if len(people) == 1 else 'people'}: {named}")
        parts.extend(self.open_to)
        return "; and ".join(parts) or "nobody else"

    def with_mentions(self, mentioned: list[str], known: set[str]) -> Audience:
        """The audience with the users a text mentions who are not among its readers (`known`
        holds their ids): a mention notifies them, so they count as readers."""
        extra = sorted({m for m in mentioned if m and m not in known})
        if not extra:
            return self
        return Audience(
            self.where,
            (*self.people, *(f"{m} (mentioned)" for m in extra)),
            self.open_to,
            (*self.facts, *(f"mention:{m}" for m in extra)),
        )


async def approve_publication(
    ctx: Context[Any, Any],
    *,
    tool: str,
    audience: Audience,
    text: str,
    action: str,
    again: Callable[[], Awaitable[Audience]],
) -> bool:
    """Ask before `text` is published to `audience` when it reaches beyond one other person;
    after an approval read the audience `again` and refuse when anything about it changed.
    Returns whether the human was asked (and approved); a decline raises `ApprovalInterrupt`."""
    if not audience.publishes:
        return False
    question = (
        f"{action} in your name in {audience.where}, read by {audience.describe()}?\n\n{shown_text(text)}"
    )
    version = f"{audience.fingerprint()}-{digest(text)}"
    asked = await require_approval(ctx, tool=tool, target=audience.where, question=question, version=version)
    if asked and (await again()).fingerprint() != audience.fingerprint():
        await refuse_changed(ctx, tool=tool, target=audience.where)
    return asked
