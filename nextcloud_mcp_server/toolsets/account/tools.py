"""Account toolset (offline-access mode only): the caller's own Nextcloud authorization."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.caller import caller_of
from nextcloud_mcp_server.auth.provisioning import CONSENT_META_KEY, consent_url
from nextcloud_mcp_server.storage.errors import GrantUnreadable
from nextcloud_mcp_server.tools._context import runtime_of
from nextcloud_mcp_server.tools._registry import Toolset

__all__ = ["toolset"]

toolset = Toolset("account", nextcloud=False)


class AuthStatus(BaseModel):
    connected: bool
    provider: str | None = None
    nextcloud_user: str | None = None
    scopes: list[str] = Field(default_factory=list)
    since: str | None = Field(default=None, description="When access was granted (ISO 8601 UTC)")
    refreshed: str | None = Field(default=None, description="Last change of the stored grant")
    problem: str | None = Field(
        default=None, description="Why stored access cannot be used; connecting again replaces it"
    )


class Revocation(BaseModel):
    revoked: bool
    at_provider: bool = Field(
        description="Where the access was issued (identity provider or Nextcloud) confirmed the revocation"
    )


class ConsentConfirmation(BaseModel):
    connected: bool = Field(description="I have opened the link and connected my Nextcloud")


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


async def _status(ctx: Context[Any, Any]) -> AuthStatus:
    caller = caller_of(ctx)
    runtime = runtime_of(ctx)
    if caller is None or runtime.store is None:
        return AuthStatus(connected=False)
    try:
        grant = await runtime.store.get_grant(caller.subject)
    except GrantUnreadable as exc:
        return AuthStatus(
            connected=False,
            problem=f"the stored access cannot be read ({exc}); connect again (check_logged_in) or "
            "remove it (revoke_nextcloud_access)",
        )
    if grant is None:
        return AuthStatus(connected=False)
    return AuthStatus(
        connected=True,
        provider=grant.provider,
        nextcloud_user=grant.user_id,
        scopes=grant.scopes.split(),
        since=_iso(grant.created_at),
        refreshed=_iso(grant.updated_at),
    )


def _text(message: str, url: str | None = None, elicitation_id: str | None = None) -> CallToolResult:
    meta = {CONSENT_META_KEY: {"url": url, "elicitationId": elicitation_id}} if url else None
    return CallToolResult(content=[TextContent(type="text", text=message)], _meta=meta)


@toolset.tool(title="Connect Nextcloud", idempotent=True)
async def check_logged_in(ctx: Context[Any, Any]) -> CallToolResult:
    """Check that your Nextcloud is connected. If it is not, show a link to connect it (in a form
    your app displays) and, once you confirm, check again."""
    status = await _status(ctx)
    if status.connected:
        return _text(f"Your Nextcloud is connected (as {status.nextcloud_user}, since {status.since}).")
    caller, runtime = caller_of(ctx), runtime_of(ctx)
    if caller is None or runtime.store is None or runtime.provisioning is None:
        return _text("This server does not keep Nextcloud access for you (offline access is off).")
    settings = runtime.settings
    elicitation = await runtime.provisioning.open_consent(caller)  # reused while unopened; capped
    if isinstance(elicitation, CallToolResult):
        return elicitation
    url = consent_url(settings.public_origin, elicitation.id)
    caps = ctx.client_capabilities.elicitation if ctx.client_capabilities else None
    if caps is None or (ctx.protocol_version or "") >= "2026-07-28":
        return _text(f"Open this link to connect your Nextcloud, then ask again: {url}", url, elicitation.id)
    answer = await ctx.elicit(
        f"Open this link to connect your Nextcloud, then confirm here: {url}", ConsentConfirmation
    )
    if answer.action != "accept":
        return _text("Not connected: you declined. Run check_logged_in again whenever you are ready.")
    if (await _status(ctx)).connected:
        return _text("Connected. Your Nextcloud is ready to use.")
    minutes = settings.elicitation_timeout_seconds // 60
    return _text(
        f"Not connected yet: the sign-in was not completed. The link stays valid for {minutes} "
        f"minutes: {url}",
        url,
        elicitation.id,
    )


@toolset.tool(title="Nextcloud connection status", read_only=True)
async def nc_auth_status(ctx: Context[Any, Any]) -> AuthStatus:
    """Whether your Nextcloud is connected, as which user, with which scopes, and since when."""
    return await _status(ctx)


@toolset.tool(title="Disconnect Nextcloud", destructive=True, idempotent=True)
async def revoke_nextcloud_access(ctx: Context[Any, Any]) -> Revocation:
    """Disconnect your Nextcloud: revoke the stored access where it was issued (the identity
    provider, or Nextcloud itself) and delete it here. Your next Nextcloud request will ask for
    consent again."""
    caller, runtime = caller_of(ctx), runtime_of(ctx)
    if caller is None or runtime.store is None:
        return Revocation(revoked=False, at_provider=False)
    try:
        grant = await runtime.store.get_grant(caller.subject)
    except GrantUnreadable:
        # Nothing to revoke it with: delete it here (the issuer's copy expires on its own).
        await runtime.store.delete_grant(caller.subject)
        runtime.credentials.forget(caller.subject)
        await runtime.store.audit(
            caller.subject, "revoked", "unreadable grant deleted; not revoked at provider"
        )
        return Revocation(revoked=True, at_provider=False)
    if grant is None:
        return Revocation(revoked=False, at_provider=False)
    at_provider = await runtime.revoke_grant(grant)
    await runtime.store.delete_grant(caller.subject)
    runtime.credentials.forget(caller.subject)
    await runtime.store.audit(caller.subject, "revoked", f"at provider: {at_provider}")
    return Revocation(revoked=True, at_provider=at_provider)
