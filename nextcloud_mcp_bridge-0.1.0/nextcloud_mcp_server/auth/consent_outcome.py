"""How a consent ends, whichever provider obtained it: one place for storing the grant, closing
the elicitation, telling the MCP session that asked, and recording failures.

A failure that the person could not see in a browser page (Login Flow v2 ends on Nextcloud's own
page) is remembered briefly, so the next consent request can say what went wrong.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from nextcloud_mcp_server.storage.errors import DecryptionFailed
from nextcloud_mcp_server.storage.records import Grant

__all__ = ["FailureNotes", "complete_consent", "fail_consent", "store_grant"]

logger = logging.getLogger("nextcloud_mcp_server.auth.consent")


class FailureNotes:
    """The last consent failure per subject, kept for a while in memory (never secrets)."""

    def __init__(self, keep_seconds: float = 900.0) -> None:
        self._notes: dict[str, tuple[str, float]] = {}
        self._keep = keep_seconds

    def note(self, subject: str, reason: str) -> None:
        self._notes[subject] = (reason, time.time() + self._keep)

    def pop(self, subject: str) -> str | None:
        reason, until = self._notes.pop(subject, ("", 0.0))
        return reason if until > time.time() else None


async def complete_consent(runtime: Any, elicitation_id: str, grant: Grant) -> None:
    """Store the grant, close the elicitation and tell the MCP session that asked."""
    await store_grant(runtime, grant)
    await runtime.store.finish_elicitation(elicitation_id, "complete")
    notified = await _tell_session(runtime, elicitation_id)
    logger.info(
        "consent for %s complete via %s (session notified: %s)", grant.subject, grant.provider, notified
    )


async def store_grant(runtime: Any, grant: Grant) -> None:
    """Store a new grant of the person's (audit: granted). A grant it replaces is revoked where it
    was issued (RFC 7009): this server will never use it again."""
    try:
        replaced = await runtime.store.get_grant(grant.subject)
    except DecryptionFailed:
        replaced = None
    await runtime.store.save_grant(grant)
    if replaced is not None and replaced.secret != grant.secret:
        try:
            revoked = await runtime.revoke_grant(replaced)
        except Exception as exc:  # best effort: the new grant is stored either way
            logger.warning("revoking the replaced grant of %s failed: %s", grant.subject, exc)
            revoked = False
        await runtime.store.audit(
            grant.subject, "revoked", f"replaced by a new consent; at provider: {revoked}"
        )
    runtime.credentials.forget(grant.subject)
    runtime.consent_failures.pop(grant.subject)
    await runtime.store.audit(grant.subject, "granted", f"provider {grant.provider}; scopes {grant.scopes}")


async def fail_consent(
    runtime: Any, elicitation_id: str, subject: str, reason: str, *, tell: bool = False
) -> None:
    """Close the elicitation as failed. With `tell`, the session that asked is notified (so the
    client retries and hears the reason) - for flows whose last page is not ours."""
    await runtime.store.finish_elicitation(elicitation_id, "failed", reason)
    await runtime.store.audit(subject, "failed", reason)
    logger.info("consent for %s failed: %s", subject, reason)
    if tell:
        runtime.consent_failures.note(subject, reason)
        await _tell_session(runtime, elicitation_id)
    else:
        runtime.elicitation_sessions.forget(elicitation_id)


async def _tell_session(runtime: Any, elicitation_id: str) -> bool:
    """Notify the session that asked: here, or (several replicas) through the store, to whichever
    replica holds it. True when it was notified here."""
    if await runtime.elicitation_sessions.complete(elicitation_id):
        return True
    await runtime.store.announce_completion(elicitation_id)
    return False
