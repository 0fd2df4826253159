"""`@require_provisioning`: in offline-access mode, a tool runs only for a user who has granted
access to their Nextcloud; otherwise the user is asked, in the conversation, at that moment.

How the question reaches the user depends on what the client declared:
- `elicitation.url`, protocol 2025-11-25: JSON-RPC error -32042 (URL elicitation required) with the
  consent URL; when the browser flow completes, `notifications/elicitation/complete` goes to the
  session that asked, and the client retries by itself.
- protocol 2026-07-28: an input-required result carrying the URL elicitation (no notification in
  that era; the client retries after the user is done).
- form elicitation only: the tool answers that the user should run `check_logged_in`, which shows
  the URL in an inline form.
- no elicitation: an error result whose text gives the URL and whose `_meta` carries it.

When Nextcloud answers 401 to a stored credential (revoked in Nextcloud's security settings, the
password changed), the grant is dropped and the same call asks for consent again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from mcp import UrlElicitationRequiredError
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ElicitRequest, ElicitRequestURLParams, InputRequiredResult, TextContent

from nextcloud_mcp_server.auth.caller import Caller, caller_of
from nextcloud_mcp_server.auth.errors import GrantMissing
from nextcloud_mcp_server.auth.scopes import declared_scopes, missing_scopes
from nextcloud_mcp_server.nextcloud.errors import Unauthorized
from nextcloud_mcp_server.storage.errors import GrantUnreadable
from nextcloud_mcp_server.storage.records import Elicitation

__all__ = ["CONSENT_META_KEY", "ElicitationSessions", "Provisioning", "consent_url", "require_provisioning"]

logger = logging.getLogger(__name__)

CONSENT_META_KEY = "nextcloud-mcp/consent"
AUTHORIZE_PATH = "/oauth/authorize-nextcloud"
MESSAGE = (
    "Connect your Nextcloud: sign in once to let this assistant work with your notes, calendars "
    "and files. The call is retried when you are done."
)
F = TypeVar("F", bound=Callable[..., Any])
REUSE_MARGIN = 60.0  # an open consent is handed out again only with this many seconds left


def consent_url(public_origin: str, elicitation_id: str) -> str:
    return f"{public_origin}{AUTHORIZE_PATH}?elicitation={elicitation_id}"


class ElicitationSessions:
    """Which MCP session asked for which elicitation, to tell it when the consent completes.

    Held in memory: with several replicas, the browser's callback must reach the replica that
    holds the session (sticky sessions); the client also retries on its own.
    """

    # An open consent is reused by the same user's later calls, from any of their sessions; each
    # is told when it completes. Bounded like the sessions a user may hold.
    MAX_SESSIONS_PER_ELICITATION = 16

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[list[Any], float]] = {}

    def remember(self, elicitation_id: str, session: Any, expires_at: float) -> None:
        sessions, _ = self._sessions.setdefault(elicitation_id, ([], expires_at))
        if session not in sessions:
            sessions.append(session)
            del sessions[: -self.MAX_SESSIONS_PER_ELICITATION]

    def forget(self, elicitation_id: str) -> None:
        self._sessions.pop(elicitation_id, None)

    async def complete(self, elicitation_id: str) -> bool:
        entry = self._sessions.pop(elicitation_id, None)
        if entry is None:
            return False
        told = False
        for session in entry[0]:
            try:
                await session.send_elicit_complete(elicitation_id)
                told = True
            except Exception:
                logger.info("could not notify a session of a completed consent")
        return told

    def prune(self, now: float) -> None:
        """Forget sessions of elicitations that expired."""
        for elicitation_id, (_, expires_at) in list(self._sessions.items()):
            if expires_at <= now:
                self._sessions.pop(elicitation_id, None)

    def __len__(self) -> int:
        return len(self._sessions)


class Provisioning:
    """Decides, per call, whether the caller may go on, or how to ask for consent."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self._lock = asyncio.Lock()  # find-or-create of a consent request is one step

    async def check(self, ctx: Context[Any, Any]) -> CallToolResult | InputRequiredResult | None:
        """None when the caller has a usable grant; otherwise what the tool should answer (or the
        -32042 error, raised)."""
        caller = caller_of(ctx)
        if caller is None:
            return None
        try:
            await self.runtime.credentials.credential_for(caller)
            return None
        except GrantUnreadable as exc:
            unreadable = f" Your stored access cannot be read ({exc}); connecting again replaces it."
        except GrantMissing as exc:
            unreadable = f" {exc.note}" if exc.note else ""
        settings = self.runtime.settings
        modern = (ctx.protocol_version or "") >= "2026-07-28"  # no server-to-client requests there
        if modern:
            previous = ctx.request_state
            if ctx.input_responses and previous:
                url = consent_url(settings.public_origin, previous)
                return _error_with_url(
                    f"Not connected yet. Open {url} to connect your Nextcloud, then ask again.", url, previous
                )
        elicitation = await self.open_consent(caller)
        if isinstance(elicitation, CallToolResult):
            return elicitation
        url = consent_url(settings.public_origin, elicitation.id)
        failed = self.runtime.consent_failures.pop(caller.subject)
        last = (f" The last attempt failed: {failed}." if failed else "") + unreadable
        if modern:
            return InputRequiredResult(
                input_requests={
                    "nextcloud_consent": ElicitRequest(
                        params=ElicitRequestURLParams(message=MESSAGE + last, url=url)
                    )
                },
                request_state=elicitation.id,
            )
        elicitation_caps = ctx.client_capabilities.elicitation if ctx.client_capabilities else None
        if elicitation_caps is not None and elicitation_caps.url is not None:
            self.runtime.elicitation_sessions.remember(elicitation.id, ctx.session, elicitation.expires_at)
            message = MESSAGE + last
            raise UrlElicitationRequiredError(
                [ElicitRequestURLParams(mode="url", message=message, url=url, elicitation_id=elicitation.id)]
            )
        if elicitation_caps is not None:
            return _error_with_url(
                "Your Nextcloud is not connected yet. Run the check_logged_in tool: it shows a link to "
                f"connect it, then ask again.{last}",
                url,
                elicitation.id,
            )
        return _error_with_url(
            f"Your Nextcloud is not connected yet. Open this link to connect it, then ask again: {url}{last}",
            url,
            elicitation.id,
        )

    async def open_consent(self, caller: Caller) -> Elicitation | CallToolResult:
        """The caller's open consent request (its link not yet followed) if there is one, else a
        new one - unless too many of theirs are pending already."""
        store, settings = self.runtime.store, self.runtime.settings
        async with self._lock:
            reusable = await store.reusable_elicitation(
                caller.subject, caller.user_id, time.time() + REUSE_MARGIN
            )
            if reusable is not None:
                return cast(Elicitation, reusable)
            pending = await store.pending_elicitations(caller.subject)
            limit = settings.consent_max_pending_per_user
            if pending >= limit:
                minutes = max(1, round(settings.elicitation_timeout_seconds / 60))
                return CallToolResult(
                    is_error=True,
                    content=[
                        TextContent(
                            type="text",
                            text=f"{pending} sign-ins to Nextcloud are already under way for you (at most "
                            f"{limit}, CONSENT_MAX_PENDING_PER_USER). Finish one in your browser, or ask "
                            f"again when they have expired (within {minutes} minutes).",
                        )
                    ],
                )
            elicitation = await store.create_elicitation(
                caller.subject, settings.elicitation_timeout_seconds, caller.user_id
            )
        await store.audit(caller.subject, "consent_requested", f"elicitation {elicitation.id[:8]}")
        return cast(Elicitation, elicitation)

    async def refused(self, caller: Caller, since: float) -> bool:
        """Nextcloud refused the caller's stored credential (401) in a call begun at `since`:
        True when the grant was dropped (ask for consent again), False when it had changed since
        (try the call once more)."""
        refused = getattr(self.runtime.credentials, "refused", None)
        return bool(await refused(caller.subject, since)) if refused is not None else False


def _error_with_url(text: str, url: str, elicitation_id: str) -> CallToolResult:
    return CallToolResult(
        is_error=True,
        content=[TextContent(type="text", text=text)],
        _meta={CONSENT_META_KEY: {"url": url, "elicitationId": elicitation_id}},
    )


def require_provisioning(fn: F) -> F:
    """Run the tool only for a caller with a usable Nextcloud grant (offline-access mode);
    elsewhere (single-user, pass-through) it changes nothing."""

    needed = declared_scopes(fn)

    @functools.wraps(fn)
    async def provisioned(*args: Any, **kwargs: Any) -> Any:
        ctx = next((v for v in (*args, *kwargs.values()) if isinstance(v, Context)), None)
        provisioning = getattr(ctx.request_context.lifespan_context, "provisioning", None) if ctx else None
        caller = caller_of(ctx) if provisioning is not None else None
        # A call the scopes refuse anyway is refused by the tool, without asking for consent first.
        if provisioning is None or caller is None or missing_scopes(needed, caller.scopes):
            # Not offline access, or a call the scopes refuse anyway (the tool says so, without
            # asking for consent first).
            return await fn(*args, **kwargs)
        answer = await provisioning.check(ctx)
        if answer is not None:
            return answer
        started = time.time()
        try:
            return await fn(*args, **kwargs)
        except Unauthorized:
            if not await provisioning.refused(caller, started):
                return await fn(*args, **kwargs)  # the grant changed meanwhile: once more
        # Nextcloud no longer takes the stored credential (revoked there, password changed): the
        # grant is gone, so this asks for consent again (or, if one just arrived, runs the call).
        answer = await provisioning.check(ctx)
        return answer if answer is not None else await fn(*args, **kwargs)

    return provisioned  # type: ignore[return-value]
