"""Asking, once, before a person's Nextcloud is indexed (docs/ADR/0084), and what `nc_find`
answers without their agreement.

In multi-user mode (OAuth) an index of someone's notes, files, events, contacts, cards and pages is
a new use of their data, so the first `nc_find` asks them, in a form the model cannot answer, what
the question says: what is kept, where, and how to remove it. The answer is kept with their grant
(offline access: sealed in the store, `storage/find_consent.py`; it goes when the grant goes) or,
in pass-through mode where no grant is stored, in their own index's marks (it goes with the index).
`nc_find_forget` withdraws it with the index: the next `nc_find` asks again.

- agreed: indexing goes on (and, with offline access, in the background);
- declined, or the box left unticked: remembered; `nc_find` answers from Nextcloud's own search
  (files by their names) and says so;
- cancelled (the form dismissed): nothing remembered, asked again next time;
- a client that cannot show a form: not asked, not indexed; the answer says so.
Single-user mode asks nothing: the operator configured the server with their own credential and
chose the find toolset.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.index.engine import FindIndex
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.resources._uris import file_uri
from nextcloud_mcp_server.tools._approval import ApprovalInterrupt
from nextcloud_mcp_server.tools._context import runtime_of
from nextcloud_mcp_server.toolsets.search.client import UnifiedSearchClient

__all__ = ["INPUT_KEY", "QUESTION", "IndexConsent", "consent_to_index", "forget_consent", "nextcloud_search"]

INPUT_KEY = "find_consent"
MARKS = "consent"  # the index's marks that hold the answer in pass-through mode
Answer = Literal["agreed", "refused"]
QUESTION = (
    "Let this server keep an index of your Nextcloud so nc_find can search it? It reads your notes, "
    "files (names and the text of text, PDF and office documents), events, tasks, contacts, Deck "
    "cards and Collectives pages, and keeps their words, titles and paths in an index on this "
    "server (its database), for you alone; every hit is checked with Nextcloud before it is shown. "
    "{background}Remove it at any time with nc_find_forget; disconnecting your Nextcloud deletes it "
    "too. Without it, nc_find searches file names with Nextcloud's own search."
)
DECLINED = (
    "you declined indexing your Nextcloud (nc_find_forget clears that answer: you are then asked again)"
)
BACKGROUND = "While you stay connected, it is kept up to date in the background. "


class IndexConsent(BaseModel):
    agree: bool = Field(description="Yes, keep an index of my Nextcloud on this server (removable any time)")


async def _kept(ctx: Context[Any, Any], index: FindIndex, user: str) -> str | None:
    runtime = runtime_of(ctx)
    if runtime.store is not None:
        found = await runtime.store.find_consents.get(user)
        return None if found is None else found.answer
    return (await index.marks(user, MARKS)).get("find", "").partition("|")[0] or None


async def _keep(ctx: Context[Any, Any], index: FindIndex, user: str, answer: Answer | None) -> None:
    runtime = runtime_of(ctx)
    if runtime.store is not None:
        await runtime.store.find_consents.put(user, answer)
        await runtime.store.audit(user, f"find_index_{answer or 'withdrawn'}")
    else:
        await index.set_marks(
            user, MARKS, {"find": None if answer is None else f"{answer}|{time.time():.0f}"}
        )


async def forget_consent(ctx: Context[Any, Any], index: FindIndex, user: str) -> None:
    """Withdraw the answer (with the index): the next nc_find asks again."""
    if caller_of(ctx) is not None and runtime_of(ctx).store is not None:
        await _keep(ctx, index, user, None)


async def consent_to_index(ctx: Context[Any, Any], index: FindIndex, user: str) -> str | None:
    """None when `user`'s Nextcloud may be indexed; otherwise why not (said to the person). Raises
    `ApprovalInterrupt` with the question for a client on protocol 2026-07-28."""
    if caller_of(ctx) is None:
        return None  # single-user mode: the operator's own choice
    kept = await _kept(ctx, index, user)
    if kept == "agreed":
        return None
    if kept == "refused":
        return DECLINED
    question = QUESTION.format(background=BACKGROUND if runtime_of(ctx).store is not None else "")
    caps = ctx.client_capabilities.elicitation if ctx.client_capabilities else None
    if (ctx.protocol_version or "") >= "2026-07-28":
        response = (ctx.input_responses or {}).get(INPUT_KEY)
        if response is None:
            form = ElicitRequestFormParams(
                message=question, requested_schema=IndexConsent.model_json_schema()
            )
            raise ApprovalInterrupt(
                InputRequiredResult(input_requests={INPUT_KEY: ElicitRequest(params=form)}, request_state="-")
            )
        action, content = getattr(response, "action", "cancel"), getattr(response, "content", None) or {}
    elif caps is None or (caps.form is None and caps.url is not None):
        return "this client cannot ask you whether your Nextcloud may be indexed (it shows no forms)"
    else:
        result = await ctx.elicit(question, IndexConsent)
        action = result.action
        content = result.data.model_dump() if result.action == "accept" else {}
    if action == "cancel":
        return (
            "you dismissed the question whether your Nextcloud may be indexed (you are asked again next time)"
        )
    agreed = action == "accept" and content.get("agree") is True
    await _keep(ctx, index, user, "agreed" if agreed else "refused")
    return None if agreed else DECLINED


async def nextcloud_search(nc: NextcloudClient, query: str, limit: int) -> list[dict[str, Any]]:
    """Files whose names match `query`, from Nextcloud's own search (its `files` provider), as
    nc_find's hits; [] when Nextcloud cannot answer."""
    try:
        page = await nc.api(UnifiedSearchClient).search("files", query[:200], limit=min(limit, 25))
    except NextcloudError:
        return []
    hits = []
    for hit in page.hits:
        path = paths.clean(hit.attributes.get("path", "")) if hit.attributes.get("path") else ""
        if not path:
            continue
        folder, _, _ = path.rpartition("/")
        hits.append(
            {
                "kind": "file",
                "title": hit.title,
                "where": folder,
                "modified": "",
                "excerpt": hit.subline,
                "uri": file_uri(path),
                "open_with": {"tool": "nc_webdav_read_file", "arguments": {"path": path}},
            }
        )
    return hits
