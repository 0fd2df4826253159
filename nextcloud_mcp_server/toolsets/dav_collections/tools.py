"""Calendars and address books themselves (docs/ADR/0087): create, rename (a calendar's colour
too), and delete after asking the human, bound to the collection as read: its address, its name,
its version (CTag or sync token) and how many events, tasks or contacts it holds. On demand, so
the default list stays as it is; the calendar and contacts toolsets read and fill them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NamedTuple

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import CALENDAR_WRITE, CONTACTS_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.dav import collections
from nextcloud_mcp_server.nextcloud.dav.carddav import AddressBook
from nextcloud_mcp_server.nextcloud.dav.home import DavHomeClient
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.models import Calendar
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._shown import bound_version, shown_text
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("dav_collections")

Name = Annotated[str, Field(min_length=1, max_length=300, description="As people see it, e.g. 'Work trips'")]
CalendarRef = Annotated[
    str, Field(max_length=300, description="Calendar id (or name) from nc_calendar_list_calendars")
]
BookRef = Annotated[
    str, Field(max_length=300, description="Address book id (or name) from nc_contacts_list_address_books")
]
Color = Annotated[str, Field(max_length=20, description="'#' and six hex digits, e.g. '#0082c9'")]
_HOLDS = {"VEVENT": "events", "VTODO": "tasks"}


class CalendarMade(BaseModel):
    id: str = Field(description="Pass as `calendar` to the calendar tools")
    name: str
    color: str | None
    holds: list[str] = Field(description="events, tasks")


class AddressBookMade(BaseModel):
    id: str = Field(description="Pass as `address_book` to the contacts tools")
    name: str


class DeletedCollection(BaseModel):
    id: str
    name: str
    held: int = Field(description="Events, tasks or contacts it held")
    deleted: bool = True


def _calendar(found: Calendar) -> CalendarMade:
    holds = [_HOLDS[c] for c in found.components if c in _HOLDS]
    return CalendarMade(id=found.id, name=found.display_name, color=found.color, holds=holds)


def _own(found: Calendar | AddressBook, what: str) -> None:
    """Only the user's own: Nextcloud lists one shared with them as `<id>_shared_by_<owner>`
    (29 and 34), and deleting that would only unsubscribe them."""
    if "_shared_by_" in found.id:
        owner = found.id.rpartition("_shared_by_")[2][:60]
        raise InvalidInput(
            f"the {what} {found.id!r} is shared with you by {owner}; only they can rename or delete it"
        )
    if not found.writable:
        raise InvalidInput(f"the {what} {found.id!r} is read-only for you (Nextcloud's own)")


# a collection as read for the question: its address, its version (CTag or sync token), its name
_Read = tuple[str, str, str]


class _Ask(NamedTuple):
    tool: str
    target: str
    question: str


async def _delete_after_asking(
    ctx: Context[Any, Any],
    dav: DavHomeClient,
    ask: _Ask,
    first: _Read,
    count: int,
    read_again: Callable[[], Awaitable[_Read]],
) -> None:
    """Ask, bound to the collection as first read and its member count; once approved, read both
    again and delete only if nothing changed meanwhile (gone, renamed, written to, moved)."""
    href, ctag, name = first
    version = bound_version(ctag, href, name, count)
    tool, target = ask.tool, ask.target
    if await require_approval(ctx, tool=tool, target=target, question=ask.question, version=version):
        try:
            now = await read_again()
        except NotFound:
            await refuse_changed(ctx, tool=tool, target=target)
        held = await collections.member_count(dav, now[0])
        if bound_version(now[1], now[0], now[2], held) != version:
            await refuse_changed(ctx, tool=tool, target=target)
    await collections.remove(dav, href)


@toolset.tool(title="Create a calendar")
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_create_calendar(
    name: Name,
    ctx: Context[Any, Any],
    holds: Annotated[Literal["events", "tasks", "both"], Field(description="What it takes")] = "events",
    color: Color | None = None,
) -> CalendarMade:
    """Create a calendar of yours (for events, tasks or both); refused when one has that name."""
    wanted = collections.check_name(name, "calendar")
    paint = collections.check_color(color) if color is not None else None
    caldav = (await nextcloud_for(ctx)).caldav
    made = await collections.create_calendar(
        caldav, wanted, color=paint, components=collections.COMPONENTS[holds]
    )
    return _calendar(made)


@toolset.tool(title="Rename a calendar", idempotent=True)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_update_calendar(
    calendar: CalendarRef,
    ctx: Context[Any, Any],
    name: Annotated[Name | None, Field(description="Its new name")] = None,
    color: Color | None = None,
) -> CalendarMade:
    """Rename a calendar of yours, or change its colour; refused when another has that name."""
    if name is None and color is None:
        raise InvalidInput("give a new name, a colour, or both")
    wanted = collections.check_name(name, "calendar") if name is not None else None
    paint = collections.check_color(color) if color is not None else None
    caldav = (await nextcloud_for(ctx)).caldav
    found = await caldav.calendar(calendar, find_default=False)
    _own(found, "calendar")
    return _calendar(await collections.update_calendar(caldav, found, name=wanted, color=paint))


@toolset.tool(title="Delete a calendar", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(CALENDAR_WRITE)
async def nc_calendar_delete_calendar(calendar: CalendarRef, ctx: Context[Any, Any]) -> DeletedCollection:
    """Delete a calendar of yours with all its events and tasks. The user is asked to approve first."""
    caldav = (await nextcloud_for(ctx)).caldav
    found = await caldav.calendar(calendar, find_default=False)
    _own(found, "calendar")
    count = await collections.member_count(caldav, found.href)
    noun = " and ".join(_HOLDS[c] for c in found.components if c in _HOLDS) or "entries"
    target = f"the calendar {shown_text(found.display_name, 200)} (id {found.id})"
    question = (
        f"Delete {target} with its {count} {noun}? "
        "Nextcloud keeps it in the Calendar app's trash bin until that is emptied."
    )

    async def read() -> _Read:
        now = await caldav.calendar(found.id, find_default=False)
        return now.href, now.ctag, now.display_name

    read_first = (found.href, found.ctag, found.display_name)
    ask = _Ask("nc_calendar_delete_calendar", target, question)
    await _delete_after_asking(ctx, caldav, ask, read_first, count, read)
    return DeletedCollection(id=found.id, name=found.display_name, held=count)


@toolset.tool(title="Create an address book")
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_create_address_book(name: Name, ctx: Context[Any, Any]) -> AddressBookMade:
    """Create an address book of yours; refused when one has that name."""
    wanted = collections.check_name(name, "address book")
    made = await collections.create_address_book((await nextcloud_for(ctx)).carddav, wanted)
    return AddressBookMade(id=made.id, name=made.name)


@toolset.tool(title="Rename an address book", idempotent=True)
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_rename_address_book(
    address_book: BookRef, name: Annotated[Name, Field(description="Its new name")], ctx: Context[Any, Any]
) -> AddressBookMade:
    """Rename an address book of yours; refused when another one has that name."""
    wanted = collections.check_name(name, "address book")
    carddav = (await nextcloud_for(ctx)).carddav
    found = await carddav.address_book(address_book)
    _own(found, "address book")
    now = await collections.rename_address_book(carddav, found, wanted)
    return AddressBookMade(id=now.id, name=now.name)


@toolset.tool(title="Delete an address book", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_delete_address_book(address_book: BookRef, ctx: Context[Any, Any]) -> DeletedCollection:
    """Delete an address book of yours with all its contacts. The user is asked to approve first."""
    carddav = (await nextcloud_for(ctx)).carddav
    found = await carddav.address_book(address_book)
    _own(found, "address book")
    count = await collections.member_count(carddav, found.href)
    target = f"the address book {shown_text(found.name, 200)} (id {found.id})"
    question = f"Delete {target} with its {count} contacts? It cannot be restored."

    async def read() -> _Read:
        now = await carddav.address_book(found.id)
        return now.href, now.ctag, now.name

    ask = _Ask("nc_contacts_delete_address_book", target, question)
    await _delete_after_asking(ctx, carddav, ask, (found.href, found.ctag, found.name), count, read)
    return DeletedCollection(id=found.id, name=found.name, held=count)
