"""CardDAV (RFC 6352) on the user's address books.

Discovery like CalDAV: `current-user-principal`, then the principal's `addressbook-home-set`
(`carddav_principal_home.txt`). Nextcloud lists, beside the user's own books, the read-only
system book of all accounts and "Recently contacted" (`carddav_propfind_books.txt`).
Searches are `addressbook-query` REPORTs with `text-match` (`i;unicode-casemap`, contains), which
Nextcloud answers case-insensitively in any script; results are bounded with `card:limit`.
A search can ask for only some properties of each card (`<card:address-data>` with `<card:prop
name=...>`, RFC 6352 10.4; Nextcloud 29 and 34 cut the card to those plus UID, VERSION and FN)
and for Nextcloud's `has-photo`, so a photo (base64, often tens of KB, up to 5 MB) is not sent.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.dav.home import WRITE_PRIVILEGES, DavHomeClient
from nextcloud_mcp_server.nextcloud.dav.xml import CS, DAV, xml_escape
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound, PreconditionFailed

__all__ = [
    "CARDDAV",
    "DEFAULT_BOOK",
    "MAX_QUERY",
    "MAX_RESULTS",
    "AddressBook",
    "Card",
    "CardDAVClient",
    "plain_etag",
]

NC_COM = "http://nextcloud.com/ns"
DEFAULT_BOOK = "contacts"
_GENERATED = ("z-app-generated--", "z-server-generated--")  # the accounts, recently contacted
NO_ADDRESS_BOOK = (
    "you have no address book of your own yet (Nextcloud makes the default one at the first "
    "login in a browser, not for an app password): log in to Nextcloud's web page once, or create "
    "an address book there (Contacts app), then ask again"
)
_PROPERTY_NAME = re.compile(r"^[A-Z][A-Z0-9-]{0,39}$")

CARDDAV = "urn:ietf:params:xml:ns:carddav"
MAX_QUERY = 200
MAX_RESULTS = 500
WHOLE_BODY = 1024 * 1024  # aiohttp warns about (and copies) bodies above this sent as bytes
_CHUNK = 64 * 1024
_BOOKS = (
    f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}" xmlns:cs="{CS}">'
    "<d:prop><d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><d:current-user-privilege-set/>"
    "</d:prop>"
    "</d:propfind>"
)


@dataclass(frozen=True)
class AddressBook:
    id: str
    href: str
    name: str
    writable: bool
    ctag: str = ""  # changes whenever a card of the book changes (its CTag, else its sync token)


@dataclass(frozen=True)
class Card:
    href: str
    etag: str
    vcard: str
    # Nextcloud's `has-photo` when the card was read without its photo; None: read whole
    has_photo: bool | None = None

    @property
    def name(self) -> str:
        """The file name of the card in its address book (e.g. `<uid>.vcf`)."""
        return unquote(self.href.rstrip("/").rpartition("/")[2])


def plain_etag(value: str | None) -> str:
    """An ETag as sent in If-Match (see `etags`: nginx makes the ETag of a card with a photo weak)."""
    return etags.plain(value)


class CardDAVClient(DavHomeClient):
    """The address books of one user."""

    HOME_SET = f"{{{CARDDAV}}}addressbook-home-set"
    MULTIGET = (CARDDAV, "addressbook-multiget")
    HOME_PATH = "addressbooks/users"
    KIND = "CardDAV"

    async def address_books(self) -> list[AddressBook]:
        found = []
        async for item in self._multistatus("PROPFIND", await self.home(), "1", _BOOKS):
            if f"{{{CARDDAV}}}addressbook" not in item.children(f"{{{DAV}}}resourcetype"):
                continue
            path = urlsplit(item.href).path
            book_id = unquote(path.rstrip("/").rpartition("/")[2])
            privileges = item.props.get(f"{{{DAV}}}current-user-privilege-set")
            writable = True
            if privileges is not None:
                writable = bool({p.tag for privilege in privileges for p in privilege} & WRITE_PRIVILEGES)
            found.append(
                AddressBook(
                    id=book_id,
                    href=path if path.endswith("/") else path + "/",
                    name=item.text(f"{{{DAV}}}displayname") or book_id,
                    writable=writable,
                    # Nextcloud (29, 34) gives address books no CTag, only their sync token
                    ctag=item.text(f"{{{CS}}}getctag") or item.text(f"{{{DAV}}}sync-token") or "",
                )
            )
        return sorted(found, key=lambda b: (not b.writable, b.name.casefold()))

    async def address_book(self, wanted: str) -> AddressBook:
        books = await self.address_books()
        for book in books:
            if wanted in (book.id, book.name):
                return book
        known = ", ".join(f"{b.id} ({b.name})" for b in books) or "none"
        raise NotFound(self.host, f"no address book '{wanted}'; the address books are: {known}", status=404)

    async def chosen_book(self, wanted: str | None, *, write: bool = False) -> AddressBook:
        """The book named `wanted`, else `contacts`, else the first of the user's own they can
        write to; with `write`, refused when read-only."""
        if wanted is None:
            books = await self.address_books()
            own = [b for b in books if b.writable and not b.id.startswith(_GENERATED)]
            mine = [b for b in books if b.id == DEFAULT_BOOK] or own
            if not mine:
                raise InvalidInput(NO_ADDRESS_BOOK)
            book = mine[0]
        else:
            book = await self.address_book(wanted)
        if write and not book.writable:
            raise InvalidInput(f"address book '{book.id}' is read-only for you")
        return book

    async def query(
        self,
        book: AddressBook,
        properties: list[str],
        text: str,
        *,
        limit: int = 50,
        match: Literal["contains", "equals"] = "contains",
        shown: Sequence[str] | None = None,
    ) -> list[Card]:
        """Cards where any of `properties` contains `text` (case-insensitive), at most `limit`.
        With `shown`, each card carries only those properties (and UID, VERSION, FN) and
        `has_photo`; without it, the whole card."""
        if not text or len(text) > MAX_QUERY:
            raise InvalidInput(f"search for 1 to {MAX_QUERY} characters")
        if not 1 <= limit <= MAX_RESULTS:
            raise InvalidInput(f"limit must be between 1 and {MAX_RESULTS}")
        if shown is not None and not all(_PROPERTY_NAME.match(name) for name in shown):
            raise InvalidInput("property names are upper-case vCard names such as FN or EMAIL")
        collation = "i;octet" if match == "equals" else "i;unicode-casemap"
        filters = "".join(
            f'<card:prop-filter name="{xml_escape(prop)}"><card:text-match collation="{collation}" '
            f'match-type="{match}">{xml_escape(text)}</card:text-match></card:prop-filter>'
            for prop in properties
        )
        if shown:
            wanted = "".join(f'<card:prop name="{name}"/>' for name in shown)
            data = f'<card:address-data>{wanted}</card:address-data><nc:has-photo xmlns:nc="{NC_COM}"/>'
        else:
            data = "<card:address-data/>"
        body = (
            f'<?xml version="1.0"?><card:addressbook-query xmlns:d="{DAV}" xmlns:card="{CARDDAV}">'
            f'<d:prop><d:getetag/>{data}</d:prop><card:filter test="anyof">'
            f"{filters}</card:filter><card:limit><card:nresults>{limit}</card:nresults></card:limit>"
            "</card:addressbook-query>"
        )
        cards: list[Card] = []
        async for item in self._multistatus("REPORT", book.href, "1", body):
            data = item.text(f"{{{CARDDAV}}}address-data") or ""
            if data and len(cards) < limit:
                etag = plain_etag(item.text(f"{{{DAV}}}getetag"))
                photo = item.text(f"{{{NC_COM}}}has-photo") if shown else None
                has_photo = None if photo is None else photo in ("1", "true")
                cards.append(Card(urlsplit(item.href).path, etag, data, has_photo))
        return cards

    async def all_cards(self, book: AddressBook) -> list[Card]:
        """Every card of `book` with its ETag (one addressbook-query REPORT without a filter)."""
        body = (
            f'<?xml version="1.0"?><card:addressbook-query xmlns:d="{DAV}" xmlns:card="{CARDDAV}">'
            "<d:prop><d:getetag/><card:address-data/></d:prop></card:addressbook-query>"
        )
        cards: list[Card] = []
        async for item in self._multistatus("REPORT", book.href, "1", body):
            data = item.text(f"{{{CARDDAV}}}address-data") or ""
            if data:
                cards.append(Card(urlsplit(item.href).path, plain_etag(item.text(f"{{{DAV}}}getetag")), data))
        return cards

    async def get(self, href: str) -> Card:
        response = await self._http.request("GET", self._path(href), credential=self._credential)
        etag = plain_etag(response.headers.get("etag"))
        return Card(href=urlsplit(href).path, etag=etag, vcard=response.text)

    async def default_book_card(self, uid: str) -> Card | None:
        """`<uid>.vcf` in the default address book `contacts` (Nextcloud's, where Contacts writes)
        with one GET and no listing of the books; None when it is not there."""
        href = f"{await self.home()}{DEFAULT_BOOK}/{quote(uid, safe='')}.vcf"
        try:
            return await self.get(href)
        except NotFound:
            return None

    async def find(self, book: AddressBook, uid: str) -> Card:
        """The card with this UID: at `<uid>.vcf` first (what Nextcloud Contacts writes), else by
        an exact UID query."""
        try:
            return await self.get(book.href + quote(uid, safe="") + ".vcf")
        except NotFound:
            pass
        matches = await self.query(book, ["UID"], uid, limit=1, match="equals")
        if not matches:
            raise NotFound(self.host, f"no contact with uid '{uid}' in address book '{book.id}'", status=404)
        return matches[0]

    async def put(
        self, href: str, vcard: str, *, etag: str | None = None, create: bool = False
    ) -> str | None:
        headers = {"Content-Type": "text/vcard; charset=utf-8"}
        if create:
            headers["If-None-Match"] = "*"
        elif etag:
            headers["If-Match"] = etags.quoted(etag)
        data = vcard.encode()
        try:
            if len(data) <= WHOLE_BODY:
                response = await self._http.request(
                    "PUT", self._path(href), credential=self._credential, headers=headers, content=data
                )
                return plain_etag(response.headers.get("etag")) or None
            # A card with a large photo goes in chunks, as aiohttp wants bodies above 1 MiB;
            # Content-Length stays, since Nextcloud checks the card size by it.
            headers["Content-Length"] = str(len(data))
            async with self._http.stream(
                "PUT", self._path(href), credential=self._credential, headers=headers, content=_chunks(data)
            ) as streamed:
                return plain_etag(streamed.headers.get("etag")) or None
        except PreconditionFailed as exc:
            message = (
                "a contact with this uid already exists"
                if create
                else "it was changed by someone else since it was read; nothing was overwritten"
            )
            raise PreconditionFailed(self.host, message, status=412, body=exc.body) from None

    async def delete(self, href: str, *, etag: str) -> None:
        try:
            await self._http.request(
                "DELETE",
                self._path(href),
                credential=self._credential,
                headers={"If-Match": etags.quoted(etag)},
            )
        except PreconditionFailed as exc:
            raise PreconditionFailed(
                self.host, "it was changed since it was read; nothing was deleted", status=412, body=exc.body
            ) from None


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), _CHUNK):
        yield data[start : start + _CHUNK]
