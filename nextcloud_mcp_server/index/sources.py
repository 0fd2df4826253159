"""The find index's sources beyond notes and files (docs/ADR/0076): events and tasks (CalDAV),
contacts (CardDAV), Deck cards and Collectives pages. Each reads, per round, one listing of its
containers with their versions (the calendars' and address books' CTags in one PROPFIND each, the
boards' ETags in one Deck request, the collectives and then each collective's pages), and reads
the objects of a container only when its version moved; objects gone leave the index.

Keys name an item so that it can be opened and confirmed: an event, task or contact by its
object's href and UID (`href|uid`), a card by `board/stack/card`, a page by `collective/page`.
`present` is the batched confirmation for these kinds (confirm.py): one request per container (a
multiget of the hit objects' ETags for calendars and address books, a listing for the others).
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterable
from datetime import UTC, datetime
from typing import Any

import dateutil.parser

from nextcloud_mcp_server.index.engine import MAX_BODY_BYTES, FindIndex, Item, collection_of
from nextcloud_mcp_server.index.sync import Round
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import vcard
from nextcloud_mcp_server.nextcloud.dav.home import DavHomeClient
from nextcloud_mcp_server.nextcloud.errors import Forbidden, NextcloudError, NotFound
from nextcloud_mcp_server.nextcloud.models import CalendarObject
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient
from nextcloud_mcp_server.toolsets.deck.client import DeckClient

__all__ = [
    "SOURCE_KINDS",
    "present",
    "sync_boards",
    "sync_books",
    "sync_calendars",
    "sync_pages",
]

_REV = re.compile(r"^REV[;:](?:[^:\r\n]*:)?([0-9TZ:+\-]{8,30})\s*$", re.MULTILINE)
APP_GENERATED = "app-generated--deck--"
SOURCE_KINDS = ("event", "task", "contact", "card", "page")
PARALLEL = 4
MAX_CALENDAR_OBJECT = 256 * 1024  # characters of one event or task read for its words


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _changed_at(component: Any) -> float:
    """When an event or task last changed (epoch seconds), 0.0 when it does not say readably.
    Nextcloud stores LAST-MODIFIED:00010101T000000 (year 1 before UTC: timestamp() raised) and
    20240231T120000Z (reading it raised): either stopped every index round of its user."""
    try:
        moment = getattr(component.get("LAST-MODIFIED") or component.get("DTSTAMP"), "dt", None)
        return moment.timestamp() if isinstance(moment, datetime) else 0.0
    except (ValueError, OverflowError, OSError):
        return 0.0


def _calendar_items(objects: Iterable[CalendarObject], where: str) -> list[Item]:
    import icalendar  # here, not at the top: only for start-up cost (docs/ADR/0090)

    items = []
    for obj in objects:
        if len(obj.ics) > MAX_CALENDAR_OBJECT:
            continue  # parsed on the event loop: 7 MB of lines held it for 23 s
        try:
            parsed = icalendar.Calendar.from_ical(obj.ics)
        except ValueError:
            continue  # an object Nextcloud stores but nobody can read is not findable
        for name, kind in (("VEVENT", "event"), ("VTODO", "task")):
            found = [c for c in parsed.walk(name) if "RECURRENCE-ID" not in c]
            if not found:
                continue
            component = found[0]
            body = "\n".join(
                _text(component.get(p)) for p in ("LOCATION", "DESCRIPTION", "CATEGORIES") if component.get(p)
            )
            items.append(
                Item(
                    kind,
                    f"{obj.href}|{_text(component.get('UID'))}",
                    _text(component.get("SUMMARY")),
                    where,
                    _changed_at(component),
                    obj.etag,
                    body,
                )
            )
            break
    return items


async def _replace_in(
    index: FindIndex, user: str, kinds: Collection[str], prefix: str, items: list[Item]
) -> int:
    """Put `items` and remove the user's other items of `kinds` whose key starts with `prefix`."""
    removed = 0
    for kind in kinds:
        kept = {i.key for i in items if i.kind == kind}
        known = await index.versions(user, kind)
        gone = [key for key in known if key.startswith(prefix) and key not in kept]
        if gone:
            removed += await index.remove(user, kind, gone)
    for start in range(0, len(items), 50):
        await index.put(user, items[start : start + 50])
    return removed


async def _by_version(
    index: FindIndex,
    user: str,
    work: Round,
    source: str,
    kinds: Collection[str],
    containers: dict[str, str],
    read: Callable[[str], Awaitable[list[Item]]],
) -> None:
    """Re-read the containers whose version moved; forget those no longer listed."""
    marks = await index.marks(user, source)
    for gone in [key for key in marks if key not in containers]:
        work.removed += await _replace_in(index, user, kinds, gone, [])
        await index.set_marks(user, source, {gone: None})
    for key, version in containers.items():
        if version and marks.get(key) == version:
            continue
        if work.out_of_time():
            return
        work.requests += 1
        try:
            items = await read(key)
        except NextcloudError as exc:
            work.errors.append(f"{source} {key}: {exc.message}")
            continue
        work.removed += await _replace_in(index, user, kinds, key, items)
        work.read += len(items)
        await index.set_marks(user, source, {key: version or None})


async def sync_calendars(index: FindIndex, user: str, nc: NextcloudClient, work: Round) -> None:
    """Events and tasks, calendar by calendar when its CTag moved (one PROPFIND when none did)."""
    work.requests += 1
    listed = await nc.caldav.calendars(find_default=False)
    # Deck shows each board as a calendar of its cards: those are found as cards
    calendars = {c.href: c for c in listed if not c.id.startswith(APP_GENERATED)}

    async def read(href: str) -> list[Item]:
        calendar = calendars[href]
        objects: list[CalendarObject] = []
        for component in ("VEVENT", "VTODO"):
            if component in calendar.components:
                objects += await nc.caldav.query(calendar, component)
        return _calendar_items(objects, calendar.display_name)

    versions = {href: c.ctag for href, c in calendars.items()}
    await _by_version(index, user, work, "calendar", ("event", "task"), versions, read)


def _contact_item(href: str, etag: str, text: str, where: str) -> Item | None:
    view = vcard.read(text)
    if view.problems and not view.full_name:
        return None  # a card nobody can read is not findable
    parts = [view.nickname, view.organisation, view.title, view.note, *view.groups, *view.addresses]
    parts += [e.value for e in view.emails] + [p.value for p in view.phones]
    changed = _REV.search(text)
    modified = _rev(changed.group(1)) if changed else 0.0
    body = "\n".join(p for p in parts if p)
    return Item("contact", f"{href}|{view.uid}", view.full_name, where, modified, etag, body)


def _rev(text: str) -> float:
    """A vCard REV (`20261128T083000Z`, ISO 8601) as seconds; 0 when absent or unreadable."""
    try:
        moment = dateutil.parser.isoparse(text.strip())
    except (ValueError, OverflowError):
        return 0.0
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


async def sync_books(index: FindIndex, user: str, nc: NextcloudClient, work: Round) -> None:
    """Contacts, address book by address book when its CTag moved."""
    work.requests += 1
    books = {b.href: b for b in await nc.carddav.address_books()}

    async def read(href: str) -> list[Item]:
        book = books[href]
        cards = await nc.carddav.all_cards(book)
        return [i for c in cards if (i := _contact_item(c.href, c.etag, c.vcard, book.name)) is not None]

    versions = {href: b.ctag for href, b in books.items()}
    await _by_version(index, user, work, "book", ("contact",), versions, read)


async def sync_boards(index: FindIndex, user: str, nc: NextcloudClient, work: Round) -> None:
    """Deck cards, board by board when the board's ETag moved (Deck moves it with any card)."""
    deck = nc.api(DeckClient)
    work.requests += 1
    boards = {f"{b.id}/": b for b in await deck.boards() if not b.archived and not b.deleted_at}

    async def read(key: str) -> list[Item]:
        board = boards[key]
        items = []
        for stack in await deck.stacks(board.id):
            for card in stack.cards:
                items.append(
                    Item(
                        "card",
                        f"{board.id}/{stack.id}/{card.id}",
                        card.title,
                        f"{board.title} / {stack.title}",
                        float(card.last_modified),
                        card.etag or str(card.last_modified),
                        card.description or "",
                    )
                )
        return items

    versions = {key: b.etag or str(b.last_modified) for key, b in boards.items()}
    await _by_version(index, user, work, "board", ("card",), versions, read)


async def sync_pages(
    index: FindIndex, user: str, nc: NextcloudClient, work: Round, max_bytes: int = MAX_BODY_BYTES
) -> list[str]:
    """Collectives pages by their own versions (timestamp and size): one listing of the collectives
    and one of each collective's pages; changed pages' Markdown is read. The collectives' folders
    (to be left out of the files)."""
    client = await nc.dav_api(CollectivesClient)
    work.requests += 1
    folders: list[str] = []
    collectives = await client.collectives(why=False)  # one request when the app is not there
    marks = await index.marks(user, "collective")
    listed = {f"{c.id}/" for c in collectives}
    for left in [key for key in marks if key not in listed]:
        work.removed += await _replace_in(index, user, ("page",), left, [])
        await index.set_marks(user, "collective", {left: None})
    for collective in collectives:
        if work.out_of_time():
            break
        work.requests += 1
        pages = await client.pages(collective.id)
        prefix = f"{collective.id}/"
        folders.extend(sorted({p.collective_path for p in pages if p.collective_path})[:1])
        known = await index.versions(user, "page")
        now = {f"{prefix}{p.id}": p for p in pages}
        gone = [key for key in known if key.startswith(prefix) and key not in now]
        if gone:
            work.removed += await index.remove(user, "page", gone)
        for key, page in now.items():
            version = f"{page.timestamp}:{page.size}"
            if known.get(key) == version:
                continue
            if work.out_of_time():
                break
            work.requests += 1
            try:
                text = (await client.read(page, max_bytes=max_bytes)).text
            except NextcloudError as exc:
                work.errors.append(f"page {key}: {exc.message}")
                continue
            where = "/".join(x for x in (collective.name, page.file_path) if x)
            await index.put(
                user, [Item("page", key, page.title, where, float(page.timestamp), version, text)]
            )
            work.read += 1
        await index.set_marks(user, "collective", {prefix: "listed"})
    return folders


async def _listed(what: Iterable[str], listing: Callable[[str], Awaitable[set[str]]]) -> set[str]:
    slots = asyncio.Semaphore(PARALLEL)

    async def one(container: str) -> set[str]:
        async with slots:
            try:
                return await listing(container)
            except (NotFound, Forbidden):  # gone, or no longer shared with the caller
                return set()

    return set().union(*await asyncio.gather(*(one(c) for c in sorted(set(what)))))


async def present(nc: NextcloudClient, kind: str, keys: Collection[str]) -> set[str]:
    """Which of the `keys` of `kind` Nextcloud still shows the caller: one request per container
    (calendar, address book: a multiget of the hits; board, collective: a listing) holding any."""
    if kind in ("event", "task", "contact"):
        dav: DavHomeClient = nc.carddav if kind == "contact" else nc.caldav
        hrefs = {key.partition("|")[0]: key for key in keys}

        async def members(collection: str) -> set[str]:
            return await dav.present_members(collection, [h for h in hrefs if collection_of(h) == collection])

        there = await _listed((collection_of(h) for h in hrefs), members)
        return {key for href, key in hrefs.items() if href in there}
    if kind == "card":
        deck = nc.api(DeckClient)

        async def cards(board: str) -> set[str]:
            return {f"{board}/{s.id}/{c.id}" for s in await deck.stacks(int(board)) for c in s.cards}

        there = await _listed((k.partition("/")[0] for k in keys), cards)
        return set(keys) & there
    if kind == "page":
        client = await nc.dav_api(CollectivesClient)

        async def pages(collective: str) -> set[str]:
            return {f"{collective}/{p.id}" for p in await client.pages(int(collective))}

        there = await _listed((k.partition("/")[0] for k in keys), pages)
        return set(keys) & there
    return set()


def group(keys: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """(kind, key) pairs by kind."""
    found: dict[str, list[str]] = defaultdict(list)
    for kind, key in keys:
        found[kind].append(key)
    return found
