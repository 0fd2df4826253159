"""Calendars and address books as things of their own: created, renamed (a calendar's colour
too), counted and deleted (docs/ADR/0087). Knows nothing of MCP.

- A calendar is made with MKCALENDAR (RFC 4791) and an address book with an extended MKCOL
  (RFC 5689), both directly inside the user's home, at an id made from the name (`work-trips`),
  as Nextcloud's own apps do; an id taken by a calendar in Nextcloud's trash bin is answered with
  an error, and one more id with a random ending is tried.
- A name is changed with PROPPATCH (`displayname`, and Apple's `calendar-color`), then read back.
- A collection's members are counted with one Depth 1 PROPFIND of their ETags (no data).
- Names are one visible line: no control, invisible or text-direction characters (ADR 0019).
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Iterable
from typing import TypeVar
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient
from nextcloud_mcp_server.nextcloud.dav.carddav import CARDDAV, AddressBook, CardDAVClient
from nextcloud_mcp_server.nextcloud.dav.home import DavHomeClient
from nextcloud_mcp_server.nextcloud.dav.xml import APPLE, CALDAV, DAV, xml_escape
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudHTTPError
from nextcloud_mcp_server.nextcloud.models import Calendar
from nextcloud_mcp_server.nextcloud.names import check_visible

__all__ = [
    "COMPONENTS",
    "MAX_NAME",
    "check_color",
    "check_name",
    "collection_id",
    "create_address_book",
    "create_calendar",
    "member_count",
    "remove",
    "rename_address_book",
    "update_calendar",
]

MAX_NAME = 100
COMPONENTS = {"events": ("VEVENT",), "tasks": ("VTODO",), "both": ("VEVENT", "VTODO")}
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# answers to a new collection at an id that is taken (Radicale: 409; Nextcloud: 405, or a
# conflict with a calendar in its trash bin)
_TAKEN = (405, 409, 500)
N = TypeVar("N", Calendar, AddressBook)


def check_name(name: str, what: str) -> str:
    """A calendar's or address book's name: one visible line of 1 to 100 characters, trimmed."""
    text = " ".join(name.split(" ")).strip()
    if not text or _CONTROL.search(text):
        raise InvalidInput(f"the {what} name must be one non-empty line without control characters")
    check_visible(text, f"the {what} name")
    if len(text) > MAX_NAME:
        raise InvalidInput(f"the {what} name must be at most {MAX_NAME} characters (got {len(text)})")
    return text


def check_color(color: str) -> str:
    if not _COLOR.match(color):
        raise InvalidInput(f"a colour is '#' and six hex digits, such as '#0082c9' (got {color[:20]!r})")
    return color.lower()


def collection_id(name: str, taken: Iterable[str], fallback: str) -> str:
    """The id (last path segment) of a new collection: the name in lower-case ASCII letters,
    digits and dashes, at most 40 characters, numbered when taken (`work-2`)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:40].strip("-") or fallback
    have, found, n = set(taken), slug, 2
    while found in have:
        found, n = f"{slug}-{n}", n + 1
    return found


def _refuse_taken(name: str, have: Iterable[tuple[str, str]], what: str) -> None:
    for shown, found_id in have:
        if shown.strip().casefold() == name.casefold():
            raise InvalidInput(
                f"you have a {what} named {shown[:60]!r} already (id {found_id[:60]}); "
                "choose another name, or use that one"
            )


async def _make(client: DavHomeClient, method: str, home: str, wanted: str, body: str) -> str:
    """Make the collection at `wanted`, or (taken, perhaps by one in the trash bin) at `wanted`
    with a random ending; the id it was made at."""
    for found in (wanted, f"{wanted}-{secrets.token_hex(3)}"):
        try:
            await client.change_collection(method, f"{home}{quote(found, safe='')}/", body)
        except NextcloudHTTPError as exc:
            if exc.status not in _TAKEN or found != wanted:
                raise
            continue
        return found
    raise AssertionError("unreachable")  # pragma: no cover


def _named(found: list[N], wanted: str, what: str) -> N:
    for item in found:
        if item.id == wanted:
            return item
    raise InvalidInput(
        f"Nextcloud did not list the {what} {wanted!r} after making it; nothing else was changed"
    )


async def create_calendar(
    caldav: CalDAVClient, name: str, *, color: str | None, components: tuple[str, ...]
) -> Calendar:
    """A new calendar of the user's, named `name` (refused when one has that name already)."""
    calendars = await caldav.calendars(find_default=False)
    _refuse_taken(name, ((c.display_name, c.id) for c in calendars), "calendar")
    home = await caldav.home()
    comps = "".join(f'<c:comp name="{c}"/>' for c in components)
    paint = f"<x1:calendar-color>{xml_escape(color)}</x1:calendar-color>" if color else ""
    body = (
        f'<?xml version="1.0"?><c:mkcalendar xmlns:d="{DAV}" xmlns:c="{CALDAV}" xmlns:x1="{APPLE}">'
        f"<d:set><d:prop><d:displayname>{xml_escape(name)}</d:displayname>{paint}"
        f"<c:supported-calendar-component-set>{comps}</c:supported-calendar-component-set>"
        "</d:prop></d:set></c:mkcalendar>"
    )
    made = await _make(
        caldav, "MKCALENDAR", home, collection_id(name, (c.id for c in calendars), "calendar"), body
    )
    return _named(await caldav.calendars(find_default=False), made, "calendar")


async def update_calendar(
    caldav: CalDAVClient, calendar: Calendar, *, name: str | None, color: str | None
) -> Calendar:
    """Rename the calendar and/or change its colour; what Nextcloud lists afterwards."""
    if name is not None and name.casefold() != calendar.display_name.strip().casefold():
        others = [c for c in await caldav.calendars(find_default=False) if c.id != calendar.id]
        _refuse_taken(name, ((c.display_name, c.id) for c in others), "calendar")
    props = (f"<d:displayname>{xml_escape(name)}</d:displayname>" if name is not None else "") + (
        f"<x1:calendar-color>{xml_escape(color)}</x1:calendar-color>" if color is not None else ""
    )
    body = (
        f'<?xml version="1.0"?><d:propertyupdate xmlns:d="{DAV}" xmlns:x1="{APPLE}">'
        f"<d:set><d:prop>{props}</d:prop></d:set></d:propertyupdate>"
    )
    await caldav.change_collection("PROPPATCH", calendar.href, body)
    now = _named(await caldav.calendars(find_default=False), calendar.id, "calendar")
    if (name is not None and now.display_name != name) or (
        color is not None and (now.color or "").lower() != color.lower()
    ):
        raise InvalidInput(
            f"Nextcloud did not take the change of the calendar {calendar.id!r}; it is as it was"
        )
    return now


async def create_address_book(carddav: CardDAVClient, name: str) -> AddressBook:
    """A new address book of the user's, named `name` (refused when one has that name already)."""
    books = await carddav.address_books()
    _refuse_taken(name, ((b.name, b.id) for b in books), "address book")
    body = (
        f'<?xml version="1.0"?><d:mkcol xmlns:d="{DAV}" xmlns:card="{CARDDAV}">'
        "<d:set><d:prop><d:resourcetype><d:collection/><card:addressbook/></d:resourcetype>"
        f"<d:displayname>{xml_escape(name)}</d:displayname></d:prop></d:set></d:mkcol>"
    )
    home = await carddav.home()
    made = await _make(carddav, "MKCOL", home, collection_id(name, (b.id for b in books), "contacts"), body)
    return _named(await carddav.address_books(), made, "address book")


async def rename_address_book(carddav: CardDAVClient, book: AddressBook, name: str) -> AddressBook:
    if name.casefold() != book.name.strip().casefold():
        others = [b for b in await carddav.address_books() if b.id != book.id]
        _refuse_taken(name, ((b.name, b.id) for b in others), "address book")
    body = (
        f'<?xml version="1.0"?><d:propertyupdate xmlns:d="{DAV}"><d:set><d:prop>'
        f"<d:displayname>{xml_escape(name)}</d:displayname></d:prop></d:set></d:propertyupdate>"
    )
    await carddav.change_collection("PROPPATCH", book.href, body)
    now = _named(await carddav.address_books(), book.id, "address book")
    if now.name != name:
        raise InvalidInput(
            f"Nextcloud did not take the new name of the address book {book.id!r}; it is as it was"
        )
    return now


async def member_count(client: DavHomeClient, href: str) -> int:
    """How many objects (events, tasks, contacts) the collection holds."""
    return len(await client.member_etags(href))


async def remove(client: DavHomeClient, href: str) -> None:
    """Delete the whole collection (a calendar goes to Nextcloud's trash bin; an address book is
    gone)."""
    await client.change_collection("DELETE", href)
