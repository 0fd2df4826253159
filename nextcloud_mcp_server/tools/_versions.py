"""The one rule for every update that can destroy (issue 31; ADR 0004, 0013, 0019).

A tool that changes a note, event, task, contact or file the model read earlier:
1. checks the model's etag at the boundary (`given_etag`): exactly one opaque tag, else invalid
   input before any request (an empty etag once meant "no If-Match at all", a list holding the
   real ETag once matched while the approval check compared it as a whole);
2. reads the current version, and `approve_update` compares the model's etag with it: another
   version is a conflict, and nothing is asked about a version the model has not seen;
3. decides what the change removes against that current content (the caller words it as a
   question), which is refused below the `destructive` level and asked for at it;
4. writes with Nextcloud's own current ETag as If-Match (`Version.write`), never the model's
   string; a 412 then means it changed after the read, and when the human had approved, the
   answer says it changed while they were asked.

One exception, for Collectives pages (ADR 0057's amendment): an edit that by the page's size
cannot remove content skips steps 2-3 and writes with the model's checked etag as If-Match, so a
page changed since the model read it is refused by Nextcloud (412) instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, PreconditionFailed
from nextcloud_mcp_server.tools._approval import approve_removal, refuse_changed

__all__ = ["Version", "approve_update", "given_etag", "removal_question"]

T = TypeVar("T")


def given_etag(value: str, name: str = "etag") -> str:
    """The model's etag in plain form; a malformed one raises `InvalidInput`."""
    return etags.checked(value, name)


def removal_question(target: str, removed: list[str], where: str = "") -> str | None:
    """'Change <target><where>: remove its note, ...?' or None when nothing is removed."""
    return f"Change {target}{where}: {', '.join(removed)}?" if removed else None


@dataclass(frozen=True)
class Version:
    """The version an update is bound to: Nextcloud's own ETag, and whether a human approved it."""

    if_match: str
    asked: bool
    tool: str
    target: str

    async def write(self, ctx: Context[Any, Any], send: Callable[[str], Awaitable[T]]) -> T:
        """`send(if_match)`; a refusal after an approval is said and recorded as such."""
        try:
            return await send(self.if_match)
        except PreconditionFailed:
            if self.asked:
                await refuse_changed(ctx, tool=self.tool, target=self.target)
            raise


async def approve_update(
    ctx: Context[Any, Any],
    *,
    tool: str,
    target: str,
    host: str,
    given: str,
    current: str,
    question: str | None,
    argument: str = "etag",
) -> Version:
    """Bind an update to the current version: `given` (checked by `given_etag`) must be `current`
    (else `PreconditionFailed`, nothing asked); a `question` (what the change removes from the
    current content, None when nothing) is refused at level write and asked at destructive.
    `argument` names the tool's argument that carried `given`, as the refusal says it."""
    if not current:
        raise InvalidResponse(host, f"Nextcloud gave no ETag for {target}, so it is not changed")
    if given != current:
        raise PreconditionFailed(
            host,
            f"{target} changed since that {argument} was read (it is now {current}); nothing was overwritten",
            status=412,
        )
    asked = False
    if question is not None:
        asked = await approve_removal(ctx, tool=tool, target=target, question=question, version=current)
    return Version(if_match=current, asked=asked, tool=tool, target=target)
