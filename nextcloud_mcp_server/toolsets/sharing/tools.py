"""Sharing toolset: who sees your files, and giving or taking access (OCS Share API).

Exposing data is as consequential as deleting it (ADR 23): creating a share, widening one (more
rights, a later or no expiry), changing a link's password (set, changed or removed) and removing
one ask the human first, naming the path, who gets access, with which rights and until when;
these tools are annotated destructive, so they are offered only at the `destructive` level.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import SHARING_READ, SHARING_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._file_approval import approve_file_action, still_unchanged
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.sharing.client import (
    Share,
    SharesClient,
    check_expiry,
    rights_of,
    share_path,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("sharing")

Rights = Literal["read", "edit"]
ShareId = Annotated[str, Field(pattern=r"^[0-9]{1,20}$", description="The share id from a listing")]
Expiry = Annotated[str | None, Field(description="Last day of access, YYYY-MM-DD")]
_SHARE_BIT = 16  # re-sharing; Nextcloud adds it to public links by itself


class ShareInfo(BaseModel):
    id: str
    kind: str = Field(description="user, group, link (public link), email, federated, ...")
    path: str
    item_type: str
    rights: list[str] = Field(description="read, update, create, delete, share")
    share_with: str | None = Field(description="User or group id; none for public links")
    share_with_name: str | None
    owner: str
    expires: str | None
    has_password: bool
    url: str | None = Field(description="The public link to hand out (links only)")
    note: str


class ShareList(BaseModel):
    shares: list[ShareInfo]


class RemovedShare(BaseModel):
    id: str
    path: str
    removed: bool = True


def _info(share: Share) -> ShareInfo:
    return ShareInfo(
        id=share.id,
        kind=share.kind,
        path=share.path,
        item_type=share.item_type,
        rights=rights_of(share.permissions),
        share_with=share.share_with,
        share_with_name=share.share_with_name,
        owner=share.owner,
        expires=share.expiration,
        has_password=share.has_password,
        url=share.url,
        note=share.note,
    )


def _bits(rights: Rights, folder: bool) -> int:
    if rights == "read":
        return 1
    return 15 if folder else 3  # folders: read, update, create, delete; files: read, update


def _who(kind: str, share_with: str | None, name: str | None = None, password: bool = False) -> str:
    if kind == "link":
        return "anyone with the link" + (" and its password" if password else " (no password)")
    label = f"{share_with} ({name})" if name and name != share_with else f"{share_with}"
    return f"the {kind} {label}"


def _spoken(permissions: int, expires: str | None) -> str:
    rights = [r for r in rights_of(permissions) if r != "share"]
    words = "read only" if rights == ["read"] else "read and change (" + ", ".join(rights) + ")"
    return f"to {words}, " + (f"until {expires} (inclusive)" if expires else "with no end date")


@toolset.tool(title="List shares", read_only=True)
@require_scopes(SHARING_READ)
async def nc_share_list(
    ctx: Context[Any, Any],
    path: Annotated[str | None, Field(description="Only shares of this file or folder")] = None,
) -> ShareList:
    """The shares you made: who can see which file or folder, with which rights, until when,
    and the URL of public links. Give a path for the shares of one file or folder."""
    shares = (await nextcloud_for(ctx)).api(SharesClient)
    found = await (shares.of_path(path) if path else shares.mine())
    return ShareList(shares=[_info(s) for s in found])


@toolset.tool(title="List what is shared with me", read_only=True)
@require_scopes(SHARING_READ)
async def nc_share_list_shared_with_me(ctx: Context[Any, Any]) -> ShareList:
    """Files and folders other people shared with you (directly or through a group)."""
    return ShareList(
        shares=[_info(s) for s in await (await nextcloud_for(ctx)).api(SharesClient).shared_with_me()]
    )


@toolset.tool(title="Share a file or folder", destructive=True, view=APPROVAL)
@require_scopes(SHARING_WRITE)
async def nc_share_create(
    path: Annotated[str, Field(min_length=1, description="File or folder, e.g. 'Taxes'")],
    kind: Annotated[Literal["user", "group", "link"], Field(description="link = public link")],
    ctx: Context[Any, Any],
    share_with: Annotated[str | None, Field(description="User or group id (not for links)")] = None,
    rights: Annotated[Rights, Field(description="read, or edit (change, add and delete)")] = "read",
    password: Annotated[str | None, Field(description="Password for a public link")] = None,
    expire_date: Expiry = None,
    note: Annotated[str | None, Field(max_length=1000, description="Note to the recipient")] = None,
) -> ShareInfo:
    """Give a user or group access to a file or folder, or create a public link (optionally with
    a password and an expiry date). The user is asked to approve first, since it exposes data."""
    if kind == "link" and share_with:
        raise InvalidInput("a public link is for anyone with the link; leave share_with empty")
    if kind != "link" and not share_with:
        raise InvalidInput(f"name the {kind} to share with")
    if kind != "link" and password is not None:
        raise InvalidInput("only public links have a password")
    expires = check_expiry(expire_date) if expire_date else None
    nc = await nextcloud_for(ctx)
    target = share_path(path)
    files = await nc.files()
    entry = await files.stat(target.lstrip("/"))
    folder = entry.kind == "directory"
    permissions = _bits(rights, folder)
    what = f"the {'folder' if folder else 'file'} {target}"
    question = (
        f"Share {what} with {_who(kind, share_with, password=bool(password))}, "
        f"{_spoken(permissions, expires)}?"
    )
    # Bound to the item shown (its file id, version and content, as for a delete): a file renamed
    # away and another put in its place, or one rewritten, while the human is asked is not shared.
    if approval := await approve_file_action(ctx, files, entry, "nc_share_create", "", question=question):
        await still_unchanged(ctx, files, entry, "nc_share_create", approval)
    share = await nc.api(SharesClient).create(
        target,
        kind,
        permissions=permissions,
        share_with=share_with,
        password=password,
        expire_date=expires,
        note=note,
    )
    return _info(share)


def _widens(share: Share, permissions: int | None, password: str | None, expires: str | None) -> list[str]:
    """What a change would give beyond what the share gives now, or whom it would lock out."""
    wider = []
    if permissions is not None and permissions & ~share.permissions & ~_SHARE_BIT:
        wider.append("more rights than now")
    if expires == "" and share.expiration:
        wider.append("no end date")
    elif expires and share.expiration and expires > share.expiration:
        wider.append("a later end date than now")
    if password == "" and share.has_password:
        wider.append("no password")
    elif password and share.has_password:
        # whoever the new password is given to gets in; everyone who has the old one is locked out
        wider.append("a new password: whoever is told it gets in, everyone with the old one is locked out")
    elif password:
        wider.append("a password where there was none: everyone who has the link is locked out until told it")
    return wider


@toolset.tool(title="Change a share", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(SHARING_WRITE)
async def nc_share_update(
    share_id: ShareId,
    ctx: Context[Any, Any],
    rights: Annotated[Rights | None, Field(description="read, or edit")] = None,
    password: Annotated[str | None, Field(description="New link password; '' removes it")] = None,
    expire_date: Annotated[str | None, Field(description="New last day (YYYY-MM-DD); '' removes it")] = None,
    note: Annotated[str | None, Field(max_length=1000)] = None,
) -> ShareInfo:
    """Change the rights, password, expiry or note of a share. Giving more (more rights, a later
    or no expiry) and any change of a link's password (set, changed or removed: it decides who
    can open the link) ask the user first; fewer rights, an earlier expiry or a note do not."""
    shares = (await nextcloud_for(ctx)).api(SharesClient)
    share = await shares.get(share_id)
    expires = check_expiry(expire_date) if expire_date else expire_date
    if password is not None and share.kind != "link":
        raise InvalidInput("only public links have a password")
    permissions = _bits(rights, share.item_type == "folder") if rights else None
    wider = _widens(share, permissions, password, expires)
    if wider:
        what = f"the {share.kind} share of {share.path}"
        after_permissions = permissions if permissions is not None else share.permissions
        after_expiry = share.expiration if expires is None else (expires or None)
        after_password = share.has_password if password is None else bool(password)
        question = (
            f"Give {_who(share.kind, share.share_with, share.share_with_name, after_password)} access "
            f"to {share.path} {_spoken(after_permissions, after_expiry)} ({'; '.join(wider)})?"
        )
        asked = await require_approval(
            ctx, tool="nc_share_update", target=what, question=question, version=share.fingerprint
        )
        if asked and (await shares.get(share_id)).fingerprint != share.fingerprint:
            await refuse_changed(ctx, tool="nc_share_update", target=what)
    updated = await shares.update(
        share_id, permissions=permissions, password=password, expire_date=expires, note=note
    )
    return _info(updated)


@toolset.tool(title="Remove a share", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(SHARING_WRITE)
async def nc_share_delete(share_id: ShareId, ctx: Context[Any, Any]) -> RemovedShare:
    """Stop sharing: the user, group or everyone with the link loses access. The user is asked to
    approve first."""
    shares = (await nextcloud_for(ctx)).api(SharesClient)
    share = await shares.get(share_id)
    what = f"the {share.kind} share of {share.path}"
    who = _who(share.kind, share.share_with, share.share_with_name, share.has_password)
    question = f"Remove {what}? {who[0].upper()}{who[1:]} will lose access."
    asked = await require_approval(
        ctx, tool="nc_share_delete", target=what, question=question, version=share.fingerprint
    )
    if asked and (await shares.get(share_id)).fingerprint != share.fingerprint:
        await refuse_changed(ctx, tool="nc_share_delete", target=what)
    await shares.delete(share_id)
    return RemovedShare(id=share.id, path=share.path)
