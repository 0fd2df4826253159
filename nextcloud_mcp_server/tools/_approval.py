"""Human approval of destructive actions, asked through MCP elicitation, outside the model's reach.

A destructive tool describes exactly what it is about to destroy and calls `require_approval`.
The human sees that description in a form with one approve checkbox and an optional reason:
- accept with approve checked: the action runs - but only if the target is still the version that
  was shown (its ETag); otherwise it is refused as a conflict;
- decline, cancel, or accept without the box: nothing changes; the result says the human declined;
- a client that cannot ask (no form elicitation): refused, naming CONFIRM_DESTRUCTIVE.
Protocol 2026-07-28 clients get the form as an input-required result and retry with the answer.

Every decision is recorded - in the store's audit trail when there is one, else in the log - with
the target's name, never note contents or file data.
"""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ElicitRequest, ElicitRequestFormParams, InputRequiredResult, TextContent
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.tools._context import runtime_of

__all__ = [
    "Approval",
    "ApprovalInterrupt",
    "approve_removal",
    "record_decision",
    "refuse_changed",
    "require_approval",
    "shrinks",
]

logger = logging.getLogger("nextcloud_mcp_server.approvals")
INPUT_KEY = "approval"


class Approval(BaseModel):
    approve: bool = Field(description="Yes, do this. It cannot be undone from here.")
    reason: str = Field(default="", description="Optional: why (kept in the audit trail)")


class ApprovalInterrupt(Exception):
    """Stops the tool before it acts; `result` is what the tool answers instead."""

    def __init__(self, result: CallToolResult | InputRequiredResult) -> None:
        super().__init__("approval interrupt")
        self.result = result


def _refusal(text: str, decision: str) -> ApprovalInterrupt:
    return ApprovalInterrupt(
        CallToolResult(
            is_error=True,
            content=[TextContent(type="text", text=text)],
            structured_content={"declined": decision != "approved", "decision": decision},
        )
    )


async def record_decision(
    ctx: Context[Any, Any], tool: str, target: str, decision: str, reason: str = ""
) -> None:
    """The audit trail when the store is in use, the log otherwise (never contents)."""
    runtime = runtime_of(ctx)
    caller = caller_of(ctx)
    subject = caller.subject if caller else (runtime.settings.nextcloud_username or "single-user")
    detail = f"{tool}: {target}" + (f" (reason: {reason[:200]})" if reason else "")
    if runtime.store is not None:
        await runtime.store.audit(subject, f"approval_{decision}", detail)
    logger.info("destructive action %s by %s: %s", decision, subject, detail)


async def refuse_changed(ctx: Context[Any, Any], *, tool: str, target: str) -> NoReturn:
    """The target changed between the question and the answer: refuse, destroy nothing."""
    await record_decision(ctx, tool, target, "refused_changed")
    raise ApprovalInterrupt(
        CallToolResult(
            is_error=True,
            content=[
                TextContent(
                    type="text",
                    text=f"Not done: {target} changed while you were being asked, so the approval does "
                    "not cover it. Nothing was changed; ask again to see the current version.",
                )
            ],
            structured_content={"error": "conflict", "decision": "refused_changed"},
        )
    )


async def require_approval(
    ctx: Context[Any, Any], *, tool: str, target: str, question: str, version: str | None
) -> bool:
    """Return True when the human approved `question`, False when approvals are switched off;
    otherwise raise `ApprovalInterrupt` with what the tool should answer. `version` (an ETag) is
    what was shown: after True, the caller acts only on that version (or refuses, changed)."""
    settings = runtime_of(ctx).settings
    if not settings.confirm_destructive:
        return False
    modern = (ctx.protocol_version or "") >= "2026-07-28"
    caps = ctx.client_capabilities.elicitation if ctx.client_capabilities else None
    if modern:
        answer = (ctx.input_responses or {}).get(INPUT_KEY)
        if answer is None:
            schema = Approval.model_json_schema()
            form = ElicitRequestFormParams(message=question, requested_schema=schema)
            raise ApprovalInterrupt(
                InputRequiredResult(
                    input_requests={INPUT_KEY: ElicitRequest(params=form)}, request_state=version or "-"
                )
            )
        if (ctx.request_state or "-") != (version or "-"):
            await refuse_changed(ctx, tool=tool, target=target)  # answered for another version
        action, content = getattr(answer, "action", "cancel"), getattr(answer, "content", None) or {}
    elif caps is None:
        await record_decision(ctx, tool, target, "refused_no_elicitation")
        raise _refusal(
            f'Not done: this needs your approval ("{question}") and this client cannot ask for it. '
            "Nothing was changed. An administrator can turn approvals off with CONFIRM_DESTRUCTIVE=false.",
            "refused_no_elicitation",
        )
    else:
        try:
            result = await ctx.elicit(question, Approval)
        except ValueError:  # accepted with content the form does not take ({} from an unticked box)
            await record_decision(ctx, tool, target, "declined", "the answer did not match the form")
            raise _refusal(
                f'Not done: the answer to "{question}" did not match the approval form, so it is taken '
                "as no. Nothing was changed.",
                "declined",
            ) from None
        action = result.action
        content = result.data.model_dump() if result.action == "accept" else {}
    reason = str(content.get("reason", ""))
    if action == "accept" and content.get("approve") is True:
        await record_decision(ctx, tool, target, "approved", reason)
        return True
    decision = "cancelled" if action == "cancel" else "declined"
    await record_decision(ctx, tool, target, decision, reason)
    raise _refusal(f'Not done: the user {decision} ("{question}"). Nothing was changed.', decision)


def shrinks(old: str | None, new: str | None) -> bool:
    """Whether replacing `old` by `new` removes most of it: emptied, or less than half is left."""
    if new is None or not (old or "").strip():
        return False
    return not new.strip() or len(new) < len(old or "") // 2


async def approve_removal(
    ctx: Context[Any, Any], *, tool: str, target: str, question: str, version: str | None
) -> bool:
    """An update that removes content or cancels (ADR 0019) is destructive at run time: below
    the `destructive` level it is refused, at that level the human is asked like for a delete.
    Returns what `require_approval` returns; the caller writes with `version` as If-Match."""
    if runtime_of(ctx).settings.nextcloud_mcp_permissions != "destructive":
        await record_decision(ctx, tool, target, "refused_level")
        raise _refusal(
            f'Not done: "{question}" removes content, and this server is set up never to remove or '
            "overwrite (NEXTCLOUD_MCP_PERMISSIONS=write). Nothing was changed; add to it instead.",
            "refused_level",
        )
    return await require_approval(ctx, tool=tool, target=target, question=question, version=version)
